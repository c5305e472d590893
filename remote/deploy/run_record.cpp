// Run ids and local run records (see run_record.h).
#include "remote/deploy/run_record.h"

#include <algorithm>
#include <filesystem>
#include <regex>

#include <nlohmann/json.hpp>

#include "remote/slurm/local_files.h"

namespace slipway::remote {
namespace {

const std::pair<const char*, std::string RunRecord::*> kFields[] = {
    {"run_id", &RunRecord::run_id},
    {"name", &RunRecord::name},
    {"cluster", &RunRecord::cluster},
    {"job_id", &RunRecord::job_id},
    {"slurm_cluster", &RunRecord::slurm_cluster},
    {"remote_dir", &RunRecord::remote_dir},
    {"submitted", &RunRecord::submitted},
    {"last_state", &RunRecord::last_state},
};

}  // namespace

std::string utc_timestamp(std::time_t now) {
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

std::optional<std::time_t> parse_utc_timestamp(const std::string& text) {
    std::tm tm{};
    const char* end = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (end == nullptr || *end != '\0') return std::nullopt;
    const std::time_t t = timegm(&tm);
    // strptime also takes "2026-2-31T9:1:1Z"; only exactly what utc_timestamp writes is one of ours.
    if (utc_timestamp(t) != text) return std::nullopt;
    return t;
}

std::string make_run_id(const std::string& run_name, std::time_t now, std::uint32_t random) {
    std::string name;
    for (unsigned char c : run_name) {
        const bool keep = std::isalnum(c) || c == '.' || c == '_' || c == '-';
        if (!keep && !name.empty() && name.back() == '_') continue;  // one '_' per run of odd characters
        name += keep ? static_cast<char>(c) : '_';
        if (name.size() == 40) break;
    }
    while (!name.empty() && (name.front() == '.' || name.front() == '-' || name.front() == '_'))
        name.erase(0, 1);
    if (name.empty()) name = "run";
    std::tm tm{};
    gmtime_r(&now, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    char suffix[8];
    std::snprintf(suffix, sizeof suffix, "%04x", static_cast<unsigned>(random & 0xffff));
    return name + "-" + stamp + "-" + suffix;
}

std::string make_run_id(const std::string& run_name) {
    std::random_device device;
    return make_run_id(run_name, std::time(nullptr), device());
}

Status check_run_id(const std::string& run_id) {
    static const std::regex pattern("[A-Za-z0-9][A-Za-z0-9._-]{0,80}");
    if (!std::regex_match(run_id, pattern) || run_id.find("..") != std::string::npos)
        return Status::Error("\"" + run_id + "\" is not a Slipway run id");
    return Status::Ok();
}

std::string default_runs_dir() {
    return slipway_data_dir() + "/runs";
}

Status RunRecordStore::save(const RunRecord& record) const {
    if (Status s = check_run_id(record.run_id); !s.ok()) return s;
    nlohmann::ordered_json j;
    for (const auto& [key, field] : kFields)
        j[key] = record.*field;
    return write_file_atomically(dir_ + "/" + record.run_id + ".json", j.dump(2) + "\n", 0600);
}

Result<RunRecord> RunRecordStore::load(const std::string& run_id) const {
    if (Status s = check_run_id(run_id); !s.ok()) return s;
    const std::string path = dir_ + "/" + run_id + ".json";
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return Status::Error(StatusCode::kNotFound, "no run " + run_id + " in " + dir_);
    Result<std::string> text = read_local_file(path);
    if (!text.ok()) return text.status();
    const nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return Status::Error(path + ": not a JSON object");
    RunRecord record;
    for (const auto& [key, field] : kFields) {
        if (!j.contains(key)) continue;
        if (!j[key].is_string()) return Status::Error(path + ": " + key + ": must be a string");
        record.*field = j[key].get<std::string>();
    }
    if (record.run_id != run_id) return Status::Error(path + ": run_id is \"" + record.run_id + "\"");
    return record;
}

namespace {

void sort_oldest_first(std::vector<RunRecord>& records) {
    std::sort(records.begin(), records.end(), [](const RunRecord& a, const RunRecord& b) {
        return a.submitted != b.submitted ? a.submitted < b.submitted : a.run_id < b.run_id;
    });
}

// The ids of the record files in `dir` (names that are not run ids are not records); `problem` says why the
// folder could not be listed (EACCES, a stale NFS mount), so no record is lost silently.
std::vector<std::string> record_ids(const std::string& dir, std::string* problem = nullptr) {
    std::vector<std::string> ids;
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) return ids;
    std::filesystem::directory_iterator it(dir, ec);
    for (const std::filesystem::directory_iterator end; !ec && it != end; it.increment(ec)) {
        const std::filesystem::path& p = it->path();
        if (p.extension() == ".json" && check_run_id(p.stem().string()).ok())
            ids.push_back(p.stem().string());
    }
    if (ec && problem != nullptr) *problem = dir + ": cannot list the run records: " + ec.message();
    return ids;
}

}  // namespace

Result<std::vector<RunRecord>> RunRecordStore::list() const {
    std::vector<RunRecord> records;
    for (const std::string& id : record_ids(dir_)) {
        Result<RunRecord> record = load(id);
        if (!record.ok()) return record.status();
        records.push_back(*record);
    }
    sort_oldest_first(records);
    return records;
}

RunRecordStore::Scan RunRecordStore::scan() const {
    Scan scan;
    for (const std::string& id : record_ids(dir_, &scan.listing_problem)) {
        Result<RunRecord> record = load(id);
        if (record.ok()) {
            scan.records.push_back(*record);
        } else {
            scan.problems.push_back(record.error());
        }
    }
    sort_oldest_first(scan.records);
    return scan;
}

}  // namespace slipway::remote
