// Parsers of Slurm command output (see slurm_parsers.h).
#include "remote/slurm/slurm_parsers.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <set>
#include <sstream>

namespace slipway::remote {

std::string trim_space(const std::string& text) {
    size_t begin = 0, end = text.size();
    while (begin < end && std::isspace(static_cast<unsigned char>(text[begin])))
        ++begin;
    while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1])))
        --end;
    return text.substr(begin, end - begin);
}

std::vector<std::string> split_fields(const std::string& text, char separator) {
    std::vector<std::string> parts;
    std::string part;
    std::istringstream in(text);
    while (std::getline(in, part, separator))
        parts.push_back(part);
    if (!text.empty() && text.back() == separator) parts.emplace_back();
    return parts;
}

namespace {

std::vector<std::string> non_empty_lines(const std::string& text) {
    std::vector<std::string> lines;
    for (std::string& line : split_fields(text, '\n')) {
        line = trim_space(line);
        if (!line.empty()) lines.push_back(line);
    }
    return lines;
}

bool all_digits(const std::string& text) {
    return !text.empty() &&
           std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

// The digits `text` starts with (0 for none); nullopt past kMaxSlurmCount.
std::optional<int64_t> leading_number(const std::string& text) {
    int64_t value = 0;
    for (char c : text) {
        if (!std::isdigit(static_cast<unsigned char>(c))) break;
        value = value * 10 + (c - '0');
        if (value > kMaxSlurmCount) return std::nullopt;
    }
    return value;
}

// Totals of counts each at most kMaxSlurmCount: saturate rather than wrap, however many nodes are listed.
int64_t add_saturating(int64_t total, int64_t count) {
    return total > INT64_MAX - count ? INT64_MAX : total + count;
}

}  // namespace

Result<SubmittedJob> parse_sbatch_parsable(const std::string& out) {
    const std::vector<std::string> lines = non_empty_lines(out);
    if (lines.empty()) return Status::Error("sbatch --parsable printed no job id");
    // Warnings may precede the id; the id is the last line.
    const std::string& last = lines.back();
    SubmittedJob job;
    const size_t semicolon = last.find(';');
    job.job_id = last.substr(0, semicolon);
    if (semicolon != std::string::npos) job.cluster = last.substr(semicolon + 1);
    const size_t underscore = job.job_id.find('_');
    const std::string base = job.job_id.substr(0, underscore);
    if (!all_digits(base) ||
        (underscore != std::string::npos && !all_digits(job.job_id.substr(underscore + 1))))
        return Status::Error("sbatch --parsable printed \"" + last + "\", not a job id");
    return job;
}

std::string normalize_job_state(const std::string& state) {
    std::string word = trim_space(state);
    const size_t space = word.find(' ');
    if (space != std::string::npos) word = word.substr(0, space);
    // squeue -t all may add '+' to a state with flags (e.g. "CANCELLED+" in sacct).
    while (!word.empty() && word.back() == '+')
        word.pop_back();
    std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return std::toupper(c); });
    return word.empty() ? "UNKNOWN" : word;
}

bool is_terminal_state(const std::string& state) {
    static const char* const kTerminal[] = {"COMPLETED",     "FAILED",       "CANCELLED", "TIMEOUT",
                                            "NODE_FAIL",     "PREEMPTED",    "BOOT_FAIL", "DEADLINE",
                                            "OUT_OF_MEMORY", "SPECIAL_EXIT", "REVOKED"};
    return std::find(std::begin(kTerminal), std::end(kTerminal), state) != std::end(kTerminal);
}

Result<std::vector<QueueRow>> parse_squeue(const std::string& out) {
    std::vector<QueueRow> rows;
    for (const std::string& line : non_empty_lines(out)) {
        const std::vector<std::string> f = split_fields(line, '|');
        if (f.size() != 6)
            return Status::Error("squeue: cannot read line \"" + line + "\" (expected 6 fields)");
        rows.push_back({trim_space(f[0]), normalize_job_state(f[1]), trim_space(f[2]), trim_space(f[3]),
                        trim_space(f[4]), trim_space(f[5])});
    }
    return rows;
}

// Fields that scontrol prints last on their line and whose values may hold spaces, even text that looks
// like "JobState=COMPLETED" (a job name is the user's choice): each takes the rest of its line, so such a
// value cannot make up fields or records.
namespace {
bool is_line_value_key(const std::string& key) {
    static const std::set<std::string> kKeys = {"JobName", "Command", "WorkDir", "StdErr",
                                                "StdIn",   "StdOut",  "Comment"};
    return kKeys.count(key) > 0;
}
}  // namespace

std::vector<ScontrolRecord> parse_scontrol_records(const std::string& out) {
    std::vector<ScontrolRecord> records;
    std::string last_key;
    for (const std::string& raw_line : split_fields(out, '\n')) {
        const std::string line = trim_space(raw_line);
        if (line.empty()) {
            last_key.clear();
            continue;
        }
        size_t at = 0;
        while (at < line.size()) {
            const size_t start = line.find_first_not_of(" \t", at);
            if (start == std::string::npos) break;
            size_t end = line.find_first_of(" \t", start);
            if (end == std::string::npos) end = line.size();
            const std::string word = line.substr(start, end - start);
            at = end;
            const size_t eq = word.find('=');
            // A word without '=' continues the previous value (e.g. "Reason=a b").
            if (eq == std::string::npos || eq == 0) {
                if (!records.empty() && !last_key.empty()) records.back()[last_key] += " " + word;
                continue;
            }
            std::string key = word.substr(0, eq);
            if (key == "JobId" || records.empty()) records.emplace_back();  // a new record
            if (is_line_value_key(key)) {
                records.back()[key] = trim_space(line.substr(start + eq + 1));
                last_key = key;
                break;
            }
            records.back()[key] = word.substr(eq + 1);
            last_key = key;
        }
    }
    return records;
}

Result<JobInfo> job_info_from_scontrol(const std::string& out) {
    const std::vector<ScontrolRecord> records = parse_scontrol_records(out);
    for (const ScontrolRecord& r : records) {
        auto id = r.find("JobId");
        auto state = r.find("JobState");
        if (id == r.end() || state == r.end()) continue;
        auto get = [&](const char* key) {
            auto it = r.find(key);
            return it == r.end() ? std::string() : it->second;
        };
        JobInfo info;
        info.job_id = id->second;
        info.name = get("JobName");
        info.state = normalize_job_state(state->second);
        info.reason = get("Reason");
        info.exit_code = get("ExitCode");
        info.elapsed = get("RunTime");
        info.node_list = get("NodeList");
        info.source = "scontrol";
        return info;
    }
    return Status::Error("scontrol show job: no JobId/JobState in \"" + trim_space(out).substr(0, 200) +
                         "\"");
}

Result<JobInfo> job_info_from_sacct(const std::string& out, const std::string& job_id) {
    for (const std::string& line : non_empty_lines(out)) {
        const std::vector<std::string> f = split_fields(line, '|');
        if (f.size() < 6)
            return Status::Error("sacct: cannot read line \"" + line + "\" (expected 6 fields)");
        if (trim_space(f[0]) != job_id) continue;  // steps (123.batch) when -X was not honoured
        JobInfo info;
        info.job_id = trim_space(f[0]);
        info.name = f[1];
        info.state = normalize_job_state(f[2]);
        info.exit_code = trim_space(f[3]);
        info.elapsed = trim_space(f[4]);
        info.node_list = trim_space(f[5]);
        info.source = "sacct";
        return info;
    }
    return Status::Error(StatusCode::kNotFound, "sacct knows no job " + job_id);
}

Result<std::vector<Gres>> parse_gres(const std::string& text) {
    std::vector<Gres> entries;
    const std::string value = trim_space(text);
    if (value.empty() || value == "(null)") return entries;
    // Split on commas outside parentheses: "gpu:a100:4(S:0-1),shard:8".
    std::vector<std::string> items;
    std::string item;
    int depth = 0;
    for (char c : value) {
        if (c == '(') ++depth;
        if (c == ')') --depth;
        if (c == ',' && depth == 0) {
            items.push_back(item);
            item.clear();
        } else {
            item += c;
        }
    }
    items.push_back(item);
    for (std::string entry : items) {
        entry = entry.substr(0, entry.find('('));
        const std::vector<std::string> parts = split_fields(entry, ':');
        if (parts.empty() || parts[0].empty()) continue;
        Gres g;
        g.name = parts[0];
        std::optional<int64_t> count = 1;
        if (parts.size() == 2) {
            if (all_digits(parts[1])) {
                count = leading_number(parts[1]);
            } else {
                g.type = parts[1];
            }
        } else if (parts.size() > 2) {
            g.type = parts[1];
            count = leading_number(parts[2]);
        }
        if (!count) {
            return Status::Error("GRES \"" + entry + "\": the count is past " +
                                 std::to_string(kMaxSlurmCount));
        }
        g.count = *count;
        entries.push_back(g);
    }
    return entries;
}

int64_t gpu_count(const std::vector<Gres>& gres) {
    int64_t total = 0;
    for (const Gres& g : gres) {
        if (g.name == "gpu") total = add_saturating(total, g.count);
    }
    return total;
}

Result<std::vector<NodeRow>> parse_sinfo_nodes(const std::string& out) {
    std::vector<NodeRow> rows;
    const std::vector<std::string> lines = non_empty_lines(out);
    for (size_t number = 1; number <= lines.size(); ++number) {
        const std::string& line = lines[number - 1];
        const std::vector<std::string> f = split_fields(line, '|');
        if (f.size() != 6)
            return Status::Error("sinfo: cannot read line \"" + line + "\" (expected 6 fields)");
        const std::string where = "sinfo: line " + std::to_string(number) + " (" + trim_space(f[0]) + ")";
        NodeRow row;
        row.node = trim_space(f[0]);
        row.partition = trim_space(f[1]);
        if (!row.partition.empty() && row.partition.back() == '*') {
            row.partition.pop_back();
            row.default_partition = true;
        }
        row.state = trim_space(f[2]);
        const std::optional<int64_t> cpus = leading_number(trim_space(f[3]));
        const std::optional<int64_t> memory_mb = leading_number(trim_space(f[4]));
        if (!cpus || !memory_mb) {
            return Status::Error(where + ": " + (cpus ? "MEMORY" : "CPUS") + " is past " +
                                 std::to_string(kMaxSlurmCount));
        }
        row.cpus = *cpus;
        row.memory_mb = *memory_mb;
        const Result<std::vector<Gres>> gres = parse_gres(f[5]);
        if (!gres.ok()) return Status::Error(where + ": " + gres.error());
        row.gpus = gpu_count(*gres);
        if (row.gpus > kMaxSlurmCount) {
            return Status::Error(where + ": GRES holds more than " + std::to_string(kMaxSlurmCount) +
                                 " GPUs");
        }
        for (const Gres& g : *gres) {
            if (g.name == "gpu" && !g.type.empty()) {
                row.gpu_type = g.type;
                break;
            }
        }
        rows.push_back(row);
    }
    return rows;
}

std::vector<PartitionInfo> summarize_partitions(const std::vector<NodeRow>& nodes) {
    std::vector<PartitionInfo> partitions;
    for (const NodeRow& n : nodes) {
        auto it = std::find_if(partitions.begin(), partitions.end(),
                               [&](const PartitionInfo& p) { return p.name == n.partition; });
        if (it == partitions.end()) {
            partitions.push_back({n.partition, n.default_partition});
            it = partitions.end() - 1;
        }
        it->nodes += 1;
        if (n.state.rfind("idle", 0) == 0) it->idle_nodes += 1;
        it->cpus = add_saturating(it->cpus, n.cpus);
        it->gpus = add_saturating(it->gpus, n.gpus);
    }
    return partitions;
}

}  // namespace slipway::remote
