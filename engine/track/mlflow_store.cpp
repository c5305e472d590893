// The file store's layout and meta.yaml, as mlflow/store/tracking/file_store.py writes and reads them.
#include "track/mlflow_store.h"

#include <pwd.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

namespace slipway::track {
namespace {

namespace fs = std::filesystem;

// A YAML scalar for any text: a JSON string is a valid YAML double-quoted scalar.
std::string yaml_string(std::string_view text) {
    return nlohmann::json(std::string(text)).dump();
}

std::string new_run_id() {
    std::random_device device;
    std::mt19937_64 bits((static_cast<uint64_t>(device()) << 32) ^ device());
    static constexpr char kHex[] = "0123456789abcdef";
    std::string id(32, '0');
    for (char& c : id)
        c = kHex[bits() % 16];
    return id;
}

std::string user_name() {
    if (const char* user = std::getenv("USER"); user != nullptr && *user != '\0') return user;
    if (const passwd* entry = getpwuid(getuid()); entry != nullptr) return entry->pw_name;
    return "unknown";
}

std::string file_uri(const std::string& path) {
    return "file://" + path;
}

std::string number_text(double value) {
    std::array<char, 64> buffer{};
    const auto [end, error] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
    if (error != std::errc()) return "nan";
    return std::string(buffer.data(), end);  // shortest text that reads back to the same double
}

// "start_time: 1795990881553" -> 1795990881553, from a run's meta.yaml.
std::optional<int64_t> meta_start_time(const std::string& meta_path) {
    std::ifstream in(meta_path);
    std::string line;
    static constexpr std::string_view kKey = "start_time: ";
    while (std::getline(in, line))
        if (line.rfind(kKey, 0) == 0) return std::strtoll(line.c_str() + kKey.size(), nullptr, 10);
    return std::nullopt;
}

Status write_default_experiment(const std::string& root, int64_t now_ms, FileSystem& fs) {
    const std::string dir = root + "/" + std::string(kMlflowDefaultExperiment);
    if (fs::exists(dir + "/meta.yaml")) return Status::Ok();
    if (Status s = fs.create_dirs(root + "/.trash"); !s.ok()) return s;
    if (Status s = fs.create_dirs(dir); !s.ok()) return s;
    const std::string meta =
        "artifact_location: " + yaml_string(file_uri(dir)) + "\ncreation_time: " + std::to_string(now_ms) +
        "\nexperiment_id: '" + std::string(kMlflowDefaultExperiment) +
        "'\nlast_update_time: " + std::to_string(now_ms) + "\nlifecycle_stage: active\nname: Default\n";
    return write_file_atomically(dir + "/meta.yaml", meta, fs);
}

}  // namespace

std::string mlflow_key(std::string_view key) {
    std::string out(key);
    for (char& c : out) {
        const bool allowed = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' ||
                             c == '.' || c == ' ' || c == '/';
        if (!allowed) c = '_';
    }
    while (!out.empty() && out.front() == '/')
        out.erase(out.begin());  // not a path out of metrics/
    for (size_t at = out.find(".."); at != std::string::npos; at = out.find(".."))
        out[at] = '_';
    return out.empty() ? "_" : out;
}

MlflowRun::MlflowRun(FileSystem& fs, std::string root, std::string run_id, std::string run_name,
                     int64_t start_ms)
    : fs_(fs),
      root_(std::move(root)),
      run_id_(std::move(run_id)),
      run_name_(std::move(run_name)),
      dir_(root_ + "/" + std::string(kMlflowDefaultExperiment) + "/" + run_id_),
      start_ms_(start_ms) {}

Result<std::unique_ptr<MlflowRun>> MlflowRun::create(const std::string& root, const std::string& run_name,
                                                     int64_t start_ms, FileSystem& fs) {
    std::error_code ec;
    const std::string absolute = fs::absolute(root, ec).lexically_normal().string();
    if (ec) return Status::Error("mlflow: " + root + ": " + ec.message());
    if (Status s = write_default_experiment(absolute, start_ms, fs); !s.ok()) return s;
    std::unique_ptr<MlflowRun> run(new MlflowRun(fs, absolute, new_run_id(), run_name, start_ms));
    for (const char* folder : {"/metrics", "/params", "/tags", "/artifacts"})
        if (Status s = fs.create_dirs(run->dir_ + folder); !s.ok()) return s;
    if (Status s = run->write_meta(MlflowRunStatus::kRunning, std::nullopt); !s.ok()) return s;
    if (Status s = run->tag("mlflow.runName", run_name); !s.ok()) return s;
    if (Status s = run->tag("mlflow.user", user_name()); !s.ok()) return s;
    return run;
}

Result<std::optional<std::unique_ptr<MlflowRun>>> MlflowRun::reopen_latest(const std::string& root,
                                                                           const std::string& run_name,
                                                                           FileSystem& fs) {
    std::error_code ec;
    const fs::path absolute = fs::absolute(root, ec).lexically_normal();
    std::optional<std::pair<int64_t, std::string>> latest;  // start time, run id
    for (const auto& entry : fs::directory_iterator(absolute / std::string(kMlflowDefaultExperiment), ec)) {
        const Result<std::string> name = read_file((entry.path() / "tags" / "mlflow.runName").string());
        if (!name.ok() || *name != run_name) continue;
        const std::optional<int64_t> start = meta_start_time((entry.path() / "meta.yaml").string());
        if (start && (!latest || *start > latest->first))
            latest = std::make_pair(*start, entry.path().filename().string());
    }
    if (!latest) return std::optional<std::unique_ptr<MlflowRun>>();
    std::unique_ptr<MlflowRun> run(
        new MlflowRun(fs, absolute.string(), latest->second, run_name, latest->first));
    if (Status s = run->write_meta(MlflowRunStatus::kRunning, std::nullopt); !s.ok()) return s;
    return std::optional<std::unique_ptr<MlflowRun>>(std::move(run));
}

Status MlflowRun::write_meta(MlflowRunStatus status, std::optional<int64_t> end_ms) {
    const std::string meta =
        "artifact_uri: " + yaml_string(file_uri(dir_ + "/artifacts")) +
        "\nend_time: " + (end_ms ? std::to_string(*end_ms) : "null") +
        "\nentry_point_name: ''\nexperiment_id: '" + std::string(kMlflowDefaultExperiment) +
        "'\nlifecycle_stage: active\nrun_id: " + run_id_ + "\nrun_name: " + yaml_string(run_name_) +
        "\nsource_name: ''\nsource_type: 4\nsource_version: ''\nstart_time: " + std::to_string(start_ms_) +
        "\nstatus: " + std::to_string(static_cast<int>(status)) +
        "\ntags: []\nuser_id: " + yaml_string(user_name()) + "\n";
    return write_file_atomically(dir_ + "/meta.yaml", meta, fs_);
}

Status MlflowRun::write_small_file(const std::string& folder, std::string_view key, std::string_view value) {
    const std::string path = dir_ + "/" + folder + "/" + mlflow_key(key);
    if (Status s = fs_.create_dirs(fs::path(path).parent_path().string()); !s.ok()) return s;
    return write_file_atomically(path, value, fs_);
}

Status MlflowRun::param(std::string_view key, std::string_view value) {
    return write_small_file("params", key, value);
}

Status MlflowRun::tag(std::string_view key, std::string_view value) {
    return write_small_file("tags", key, value);
}

Status MlflowRun::artifact(std::string_view name, std::string_view bytes) {
    return write_small_file("artifacts", name, bytes);
}

Result<WritableFile*> MlflowRun::metric_file(const std::string& key) {
    auto open = metric_files_.find(key);
    if (open != metric_files_.end()) return open->second.get();
    const std::string path = dir_ + "/metrics/" + key;
    if (Status s = fs_.create_dirs(fs::path(path).parent_path().string()); !s.ok()) return s;
    Result<std::unique_ptr<WritableFile>> file = fs_.open_for_append(path, 0644);
    if (!file.ok()) return Status::Error("cannot open " + path + ": " + file.error());
    return metric_files_.emplace(key, std::move(*file)).first->second.get();
}

Status MlflowRun::metric(std::string_view key, double value, int64_t timestamp_ms, int64_t step) {
    Result<WritableFile*> file = metric_file(mlflow_key(key));
    if (!file.ok()) return file.status();
    const std::string line =
        std::to_string(timestamp_ms) + " " + number_text(value) + " " + std::to_string(step) + "\n";
    Status written = (*file)->append(line);
    if (written.ok()) written = (*file)->flush();  // a reader (mlflow ui) sees each point as it comes
    return written;
}

Status MlflowRun::terminate(MlflowRunStatus status, int64_t end_ms) {
    Status closed = Status::Ok();
    for (auto& [key, file] : metric_files_)
        if (Status s = file->close(); !s.ok() && closed.ok()) closed = s;
    metric_files_.clear();
    if (!closed.ok()) return closed;
    return write_meta(status, end_ms);
}

}  // namespace slipway::track
