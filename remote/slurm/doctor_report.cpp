// The doctor's report: parsing the job's tagged lines and judging each node (see doctor_report.h).
#include "remote/slurm/doctor_report.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <map>
#include <regex>
#include <sstream>

#include "remote/slurm/local_files.h"
#include "remote/slurm/slurm_parsers.h"

namespace slipway::remote {
namespace {

std::string format_gbps(double gbps) {
    char text[32];
    std::snprintf(text, sizeof(text), gbps >= 10 ? "%.0f" : "%.2f", gbps);
    return text;
}

// nvidia-smi prints "[N/A]" or "[Not Supported]" where a GPU lacks the field.
bool not_available(const std::string& value) {
    return value.empty() || value.front() == '[' || value == "N/A";
}

// "1980 MHz" -> 1980; units (MHz, C) are dropped.
Result<std::optional<long long>> number_field(const std::string& value, const std::string& column, int line) {
    if (not_available(value)) return std::optional<long long>();
    size_t used = 0;
    long long number = 0;
    try {
        number = std::stoll(value, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    const std::string rest = trim_space(value.substr(used));
    if (used == 0 || (!rest.empty() && !std::all_of(rest.begin(), rest.end(), [](unsigned char c) {
            return std::isalpha(c) || c == '%';
        })))
        return Status::Error("nvidia-smi line " + std::to_string(line) + ": " + column + " \"" + value +
                             "\" is not a number");
    return std::optional<long long>(number);
}

const std::vector<FabricExpectation> kFabrics = {
    // Gloo's ring over TCP between CPU processes; ~1.3 GB/s between two ranks on one 2-core test machine.
    {"cpu-tcp", "CPU nodes, Gloo over TCP (10-25 GbE between nodes)", 0.5, 0.5},
    {"pcie", "GPUs over PCIe, 100 GbE or one HDR port between nodes", 20, 10},
    {"a100-hdr", "8x A100 SXM on NVLink 3, 8x HDR InfiniBand between nodes", 230, 180},
    {"h100-ndr", "8x H100/H200 SXM on NVLink 4, 8x NDR InfiniBand between nodes", 450, 350},
};

}  // namespace

Result<std::vector<GpuStatus>> parse_nvidia_smi_csv(const std::string& csv) {
    std::vector<std::string> lines;
    for (const std::string& raw : split_fields(csv, '\n')) {
        const std::string line = trim_space(raw);
        if (!line.empty()) lines.push_back(line);
    }
    if (lines.empty()) return Status::Error("nvidia-smi printed nothing");
    // Column name -> position, units ("clocks.current.sm [MHz]") and the renamed prefix dropped.
    std::map<std::string, size_t> column;
    const std::vector<std::string> header = split_fields(lines[0], ',');
    for (size_t i = 0; i < header.size(); ++i) {
        std::string name = trim_space(header[i]);
        name = trim_space(name.substr(0, name.find('[')));
        if (name.rfind("clocks_event_reasons.", 0) == 0)
            name = "clocks_throttle_reasons." + name.substr(sizeof("clocks_event_reasons.") - 1);
        if (name == "clocks.current.sm") name = "clocks.sm";
        column[name] = i;
    }
    for (const char* required : {"index", "name"}) {
        if (!column.count(required))
            return Status::Error("nvidia-smi line 1: the header has no \"" + std::string(required) +
                                 "\" column (is it --format=csv output?): \"" + lines[0] + "\"");
    }
    std::vector<GpuStatus> gpus;
    for (size_t l = 1; l < lines.size(); ++l) {
        const int line_number = static_cast<int>(l) + 1;
        std::vector<std::string> fields = split_fields(lines[l], ',');
        if (fields.size() != header.size())
            return Status::Error("nvidia-smi line " + std::to_string(line_number) + ": " +
                                 std::to_string(fields.size()) + " fields where the header has " +
                                 std::to_string(header.size()) + ": \"" + lines[l] + "\"");
        for (std::string& f : fields)
            f = trim_space(f);
        auto text = [&](const char* name) {
            return column.count(name) ? fields[column[name]] : std::string();
        };
        auto number = [&](const char* name) -> Result<std::optional<long long>> {
            return number_field(text(name), name, line_number);
        };
        GpuStatus gpu;
        Result<std::optional<long long>> index = number("index");
        if (!index.ok()) return index.status();
        if (!*index)
            return Status::Error("nvidia-smi line " + std::to_string(line_number) + ": no GPU index");
        gpu.index = static_cast<int>(**index);
        gpu.bus_id = text("pci.bus_id");
        gpu.name = text("name");
        gpu.driver = text("driver_version");
        Result<std::optional<long long>> ecc = number("ecc.errors.uncorrected.volatile.total");
        Result<std::optional<long long>> clock = number("clocks.sm");
        Result<std::optional<long long>> max_clock = number("clocks.max.sm");
        Result<std::optional<long long>> temperature = number("temperature.gpu");
        for (const auto* r : {&ecc, &clock, &max_clock, &temperature})
            if (!r->ok()) return r->status();
        gpu.ecc_uncorrected = *ecc;
        if (*clock) gpu.sm_clock_mhz = static_cast<int>(**clock);
        if (*max_clock) gpu.max_sm_clock_mhz = static_cast<int>(**max_clock);
        if (*temperature) gpu.temperature_c = static_cast<int>(**temperature);
        const std::string slowdown = text("clocks_throttle_reasons.hw_slowdown");
        if (slowdown == "Active") gpu.hw_slowdown = true;
        if (slowdown == "Not Active") gpu.hw_slowdown = false;
        gpus.push_back(gpu);
    }
    return gpus;
}

const std::vector<FabricExpectation>& fabric_table() {
    return kFabrics;
}

Result<FabricExpectation> find_fabric(const std::string& name) {
    std::string names;
    for (const FabricExpectation& f : kFabrics) {
        if (name == f.name) return f;
        names += std::string(names.empty() ? "" : ", ") + f.name;
    }
    return Status::Error("unknown fabric \"" + name + "\" (known: auto, " + names + ")");
}

const FabricExpectation& fabric_for_gpus(const std::string& gpu_name) {
    auto has = [&](const char* model) { return gpu_name.find(model) != std::string::npos; };
    if (gpu_name.empty()) return kFabrics[0];
    if (has("H100") || has("H200") || has("H800") || has("GH200")) return kFabrics[3];
    if (has("A100") || has("A800")) return kFabrics[2];
    return kFabrics[1];
}

const char* verdict_name(NodeVerdict verdict) {
    switch (verdict) {
        case NodeVerdict::kOk:
            return "ok";
        case NodeVerdict::kSlow:
            return "slow";
        case NodeVerdict::kFailed:
            return "failed";
    }
    return "?";
}

bool BenchResult::all_correct() const {
    return std::all_of(sizes.begin(), sizes.end(), [](const Size& s) { return s.correct; });
}

Result<BenchResult> parse_bench_json(const std::string& text) {
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return Status::Error("bench-comm JSON is not a JSON object (truncated?): \"" + text.substr(0, 120) +
                             "\"");
    BenchResult r;
    try {
        r.backend = j.at("backend").get<std::string>();
        r.world_size = j.at("world_size").get<int>();
        for (const auto& s : j.at("results")) {
            r.sizes.push_back({s.at("bytes").get<long long>(), s.at("busbw_gbps").get<double>(),
                               s.at("correct").get<bool>()});
        }
    } catch (const nlohmann::json::exception& e) {
        return Status::Error("bench-comm JSON lacks a field: " + std::string(e.what()));
    }
    if (r.sizes.empty()) return Status::Error("bench-comm JSON has no results");
    return r;
}

std::vector<std::string> DoctorReport::bad_nodes() const {
    std::vector<std::string> bad;
    for (const NodeHealth& n : nodes)
        if (n.verdict != NodeVerdict::kOk) bad.push_back(n.node);
    return bad;
}

bool DoctorReport::healthy() const {
    const bool crossing_bad = inter_check.rfind("slow", 0) == 0 || inter_check.rfind("failed", 0) == 0;
    return bad_nodes().empty() && !crossing_bad;
}

Result<std::optional<DoctorLine>> parse_doctor_line(const std::string& raw, int line_number) {
    std::string line = raw;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    // srun --label prefixes "<task>: ".
    static const std::regex label("^\\s*[0-9]+: ");
    std::smatch m;
    if (std::regex_search(line, m, label)) line = line.substr(m.length(0));
    const std::string tag = std::string(kDoctorTag) + " ";
    if (line.rfind(tag, 0) != 0) return std::optional<DoctorLine>();
    const std::string rest = line.substr(tag.size());
    const size_t node_end = rest.find(' ');
    const size_t check_end = node_end == std::string::npos ? node_end : rest.find(' ', node_end + 1);
    if (node_end == std::string::npos || node_end == 0)
        return Status::Error("line " + std::to_string(line_number) + ": a " + kDoctorTag +
                             " line without node and check: \"" + line + "\"");
    DoctorLine d;
    d.node = rest.substr(0, node_end);
    d.check = rest.substr(node_end + 1,
                          check_end == std::string::npos ? std::string::npos : check_end - node_end - 1);
    d.payload = check_end == std::string::npos ? "" : rest.substr(check_end + 1);
    if (d.check.empty())
        return Status::Error("line " + std::to_string(line_number) + ": no check named: \"" + line + "\"");
    if (d.node != "-" && !check_node_name(d.node).ok())
        return Status::Error("line " + std::to_string(line_number) + ": \"" + d.node +
                             "\" is not a Slurm node name");
    return std::optional<DoctorLine>(d);
}

namespace {

// One other node's link to the master, measured alone (the doctor's "links" step, three or more nodes).
struct LinkResult {
    std::optional<BenchResult> bench;
    std::string error;
};

// A slow or failed link is its other node's, unless every link is: then it is the master's. Slow: below the
// share of the expected inter-node busbw, or of the links' median.
void judge_links(DoctorReport& report, const std::string& master,
                 const std::map<std::string, LinkResult>& links, double slow_fraction) {
    if (links.size() < 2) return;  // one link cannot tell which end is slow
    std::vector<double> measured;
    for (const auto& [peer, link] : links)
        if (link.bench && link.bench->all_correct()) measured.push_back(link.bench->largest_busbw());
    std::sort(measured.begin(), measured.end());
    const double median = measured.empty() ? 0 : measured[measured.size() / 2];
    std::map<std::string, std::pair<NodeVerdict, std::string>> bad;  // by the other node: verdict, why
    for (const auto& [peer, link] : links) {
        if (!link.error.empty()) {
            bad[peer] = {NodeVerdict::kFailed, "failed: " + link.error};
        } else if (!link.bench || !link.bench->all_correct()) {
            bad[peer] = {NodeVerdict::kFailed, "wrong sums"};
        } else {
            const double busbw = link.bench->largest_busbw();
            if (busbw < slow_fraction * report.expected_inter_gbps)
                bad[peer] = {NodeVerdict::kSlow, format_gbps(busbw) + " GB/s < " +
                                                     format_gbps(slow_fraction * 100) + "% of the expected " +
                                                     format_gbps(report.expected_inter_gbps) + " GB/s"};
            else if (measured.size() >= 2 && busbw < slow_fraction * median)
                bad[peer] = {NodeVerdict::kSlow,
                             format_gbps(busbw) + " GB/s < " + format_gbps(slow_fraction * 100) +
                                 "% of the links' median " + format_gbps(median) + " GB/s"};
        }
    }
    auto blame = [&](const std::string& name, NodeVerdict verdict, const std::string& reason) {
        for (NodeHealth& h : report.nodes) {
            if (h.node != name) continue;
            if (verdict == NodeVerdict::kFailed || h.verdict == NodeVerdict::kOk) h.verdict = verdict;
            h.reasons.push_back(reason);
        }
    };
    if (bad.size() == links.size()) {
        const bool any_failed = std::any_of(
            bad.begin(), bad.end(), [](const auto& b) { return b.second.first == NodeVerdict::kFailed; });
        blame(master, any_failed ? NodeVerdict::kFailed : NodeVerdict::kSlow,
              "every link to another node is slow or failed (to " + bad.begin()->first + ": " +
                  bad.begin()->second.second + ")");
        return;
    }
    for (const auto& [peer, verdict_and_why] : bad)
        blame(peer, verdict_and_why.first, "link to the master " + master + ": " + verdict_and_why.second);
}

}  // namespace

DoctorReport judge_doctor_output(const std::string& output, const DoctorJudgement& judgement) {
    DoctorReport report;
    report.slow_fraction = judgement.slow_fraction;

    // What each node printed, in order of appearance (expected nodes first, in allocation order).
    struct Seen {
        NodeHealth health;
        std::string gpu_csv;
        std::string gpu_error;
        bool gpu_none = false;
        std::optional<BenchResult> intra;
        std::string intra_error;
        std::string across_error;
        std::vector<std::string> line_problems;
        bool began = false;  // the node checks started (the "begin" line)
    };
    std::vector<std::string> order = judgement.expected_nodes;
    std::map<std::string, Seen> seen;
    std::optional<BenchResult> across;
    bool across_ran = false;
    std::string link_master;                  // the node that printed the links' results
    std::map<std::string, LinkResult> links;  // by the other node
    auto node = [&](const std::string& name) -> Seen& {
        if (!seen.count(name) && std::find(order.begin(), order.end(), name) == order.end())
            order.push_back(name);
        Seen& s = seen[name];
        s.health.node = name;
        return s;
    };

    int line_number = 0;
    for (const std::string& raw : split_fields(output, '\n')) {
        ++line_number;
        Result<std::optional<DoctorLine>> parsed = parse_doctor_line(raw, line_number);
        if (!parsed.ok()) {
            report.problems.push_back(parsed.error());
            continue;
        }
        if (!*parsed) {
            // Slurm's own complaints explain missing nodes ("Unable to create step ...").
            if (raw.find("srun: error:") != std::string::npos ||
                raw.find("slurmstepd: error:") != std::string::npos)
                report.problems.push_back("line " + std::to_string(line_number) + ": " + trim_space(raw));
            continue;
        }
        const DoctorLine& d = **parsed;
        const std::string where = "line " + std::to_string(line_number) + " (" + d.node + " " + d.check + ")";
        if (d.node == "-") {
            if (d.check == "job") {
                // "<job id> nodes <a> <b> ... master <host>:<port>": the allocation, when not given.
                std::istringstream in(d.payload);
                std::string word;
                in >> report.job_id >> word;
                while (in >> word && word != "master")
                    if (check_node_name(word).ok()) node(word);
            } else if (d.check == "step" && d.payload.rfind("across", 0) == 0) {
                across_ran = true;
            }
            continue;
        }
        Seen& s = node(d.node);
        s.health.reported = true;
        if (d.check == "begin") {
            s.began = true;
        } else if (d.check == "end") {
        } else if (d.check == "gpu-none") {
            s.gpu_none = true;
        } else if (d.check == "gpu-csv") {
            s.gpu_csv += d.payload + "\n";
        } else if (d.check == "gpu-error") {
            s.gpu_error = d.payload;
        } else if (d.check == "intra-json" || d.check == "across-json") {
            Result<BenchResult> bench = parse_bench_json(d.payload);
            if (!bench.ok()) {
                // The across-node result belongs to the whole allocation, not to the node that printed it.
                (d.check == "intra-json" ? s.line_problems : report.problems)
                    .push_back(where + ": " + bench.error());
            } else if (d.check == "intra-json") {
                s.intra = *bench;
            } else {
                across = *bench;
            }
        } else if (d.check == "link-json" || d.check == "link-error") {
            // "<other node> <JSON or reason>": the link between this node (the master) and the other one.
            const size_t space = d.payload.find(' ');
            const std::string peer = d.payload.substr(0, space);
            const std::string rest = space == std::string::npos ? "" : d.payload.substr(space + 1);
            if (!check_node_name(peer).ok()) {
                report.problems.push_back(where + ": no node named before the result");
                continue;
            }
            link_master = d.node;
            if (d.check == "link-error") {
                links[peer].error = rest;
            } else if (Result<BenchResult> bench = parse_bench_json(rest); bench.ok()) {
                links[peer].bench = *bench;
            } else {
                links[peer].error = "unreadable result: " + bench.error();
                report.problems.push_back(where + ": " + bench.error());
            }
        } else if (d.check == "intra-error") {
            s.intra_error = d.payload;
        } else if (d.check == "across-error") {
            s.across_error = d.payload;
        } else if (d.check == "rendezvous") {
            s.health.rendezvous = d.payload;
            across_ran = true;
        } else {
            s.line_problems.push_back(where + ": unknown check \"" + d.check + "\"");
        }
    }

    // The expected figures: given, else the named fabric, else the one the GPUs suggest.
    std::string first_gpu;
    for (auto& [name, s] : seen) {
        if (s.gpu_csv.empty()) continue;
        Result<std::vector<GpuStatus>> gpus = parse_nvidia_smi_csv(s.gpu_csv);
        if (gpus.ok()) {
            s.health.gpus = *gpus;
            if (first_gpu.empty() && !gpus->empty()) first_gpu = gpus->front().name;
        } else {
            s.line_problems.push_back(name + ": " + gpus.error());
        }
    }
    FabricExpectation fabric = fabric_for_gpus(first_gpu);
    if (judgement.fabric != "auto") {
        Result<FabricExpectation> named = find_fabric(judgement.fabric);
        if (named.ok())
            fabric = *named;
        else
            report.problems.push_back(named.error());
    }
    report.fabric = fabric.name;
    report.expected_intra_gbps = fabric.intra_node_gbps;
    report.expected_inter_gbps = fabric.inter_node_gbps;
    if (judgement.expect_busbw_gbps) {
        report.fabric = "given";
        report.expected_intra_gbps = report.expected_inter_gbps = *judgement.expect_busbw_gbps;
    }

    // The median intra-node busbw of the nodes that measured one: a node far below its peers is slow even
    // when the table's figure does not fit this cluster.
    std::vector<double> measured;
    for (const auto& [name, s] : seen)
        if (s.intra && s.intra->all_correct()) measured.push_back(s.intra->largest_busbw());
    std::sort(measured.begin(), measured.end());
    const double median = measured.empty() ? 0
                          : measured.size() % 2
                              ? measured[measured.size() / 2]
                              : (measured[measured.size() / 2 - 1] + measured[measured.size() / 2]) / 2;

    // Nodes that never ran their checks (a stopped slurmd, a failed launch): the across step cannot have run
    // on the others either, so their missing rendezvous report is not their fault.
    std::vector<std::string> silent;
    for (const std::string& name : order)
        if (!node(name).health.reported || !node(name).began) silent.push_back(name);

    for (const std::string& name : order) {
        Seen& s = node(name);
        NodeHealth& h = s.health;
        auto fail = [&](const std::string& reason) {
            h.verdict = NodeVerdict::kFailed;
            h.reasons.push_back(reason);
        };
        auto slow = [&](const std::string& reason) {
            if (h.verdict == NodeVerdict::kOk) h.verdict = NodeVerdict::kSlow;
            h.reasons.push_back(reason);
        };
        for (const std::string& p : s.line_problems) {
            report.problems.push_back(p);
            fail("unreadable report: " + p);
        }
        if (!h.reported || !s.began) {
            fail(h.reported ? "no report from the node checks" : "no report");
            h.gpu_check = "no report";
            report.nodes.push_back(h);
            continue;
        }
        // GPUs.
        if (!s.gpu_error.empty()) {
            fail("nvidia-smi failed: " + s.gpu_error);
            h.gpu_check = "failed: " + s.gpu_error;
        } else if (s.gpu_none) {
            h.gpu_check = "not applicable: no nvidia-smi";
            if (judgement.gpus_per_node > 0) {
                fail("no nvidia-smi on a node that should have " + std::to_string(judgement.gpus_per_node) +
                     " GPUs");
                h.gpu_check = "failed: no nvidia-smi";
            }
        } else if (!s.gpu_csv.empty()) {
            const std::vector<GpuStatus>& gpus = h.gpus;
            if (!gpus.empty())
                h.gpu_check = "ok: " + std::to_string(gpus.size()) + " x " + gpus.front().name + ", driver " +
                              gpus.front().driver;
            if (static_cast<int>(gpus.size()) < judgement.gpus_per_node)
                fail(std::to_string(gpus.size()) + " of " + std::to_string(judgement.gpus_per_node) +
                     " GPUs visible");
            for (const GpuStatus& g : gpus) {
                const std::string gpu =
                    "GPU " + std::to_string(g.index) + (g.bus_id.empty() ? "" : " (" + g.bus_id + ")");
                if (g.ecc_uncorrected && *g.ecc_uncorrected > 0)
                    fail(gpu + ": " + std::to_string(*g.ecc_uncorrected) + " uncorrected ECC errors");
                if (g.hw_slowdown && *g.hw_slowdown)
                    slow(gpu + ": hardware slowdown active (clocks throttled)");
                if (g.driver != gpus.front().driver)
                    fail(gpu + ": driver " + g.driver + " differs from GPU " +
                         std::to_string(gpus.front().index) + "'s " + gpus.front().driver);
            }
            if (h.verdict != NodeVerdict::kOk) h.gpu_check = "problem: " + h.reasons.back();
        } else {
            fail("no GPU check reported");
            h.gpu_check = "no report";
        }
        // Within the node.
        if (s.intra) {
            h.intra_busbw_gbps = s.intra->largest_busbw();
            if (report.backend.empty()) report.backend = s.intra->backend;
            report.ranks_per_node = std::max(report.ranks_per_node, s.intra->world_size);
            const double busbw = *h.intra_busbw_gbps;
            if (!s.intra->all_correct()) {
                fail("intra-node allreduce gave wrong sums");
            } else if (busbw < judgement.slow_fraction * report.expected_intra_gbps) {
                slow("intra-node busbw " + format_gbps(busbw) + " GB/s < " +
                     format_gbps(judgement.slow_fraction * 100) + "% of the expected " +
                     format_gbps(report.expected_intra_gbps) + " GB/s (" + report.fabric + ")");
            } else if (measured.size() >= 2 && busbw < judgement.slow_fraction * median) {
                slow("intra-node busbw " + format_gbps(busbw) + " GB/s < " +
                     format_gbps(judgement.slow_fraction * 100) + "% of the nodes' median " +
                     format_gbps(median) + " GB/s");
            }
        } else if (!s.intra_error.empty()) {
            fail("intra-node bench-comm: " + s.intra_error);
        } else {
            fail("no intra-node bench-comm result (the node stopped reporting)");
        }
        // Rendezvous.
        if (h.rendezvous.rfind("failed", 0) == 0)
            fail("cannot reach the master's rendezvous port: " + h.rendezvous.substr(7));
        else if (h.rendezvous.rfind("unknown", 0) == 0 && h.verdict == NodeVerdict::kOk)
            fail("rendezvous port " + h.rendezvous.substr(8));
        else if (h.rendezvous.empty() && !silent.empty())
            h.reasons.push_back("rendezvous not checked: " + silent.front() + " did not run its checks");
        else if (across_ran && h.rendezvous.empty())
            fail("no rendezvous report");
        if (!s.across_error.empty() && h.verdict == NodeVerdict::kOk)
            h.reasons.push_back("across-node bench-comm: " + s.across_error);
        report.nodes.push_back(h);
    }

    judge_links(report, link_master, links, judgement.slow_fraction);

    // Across the nodes: one figure for the whole allocation.
    if (across && report.backend.empty()) report.backend = across->backend;
    if (report.nodes.size() < 2) {
        report.inter_check = "not applicable: one node";
    } else if (across) {
        report.inter_busbw_gbps = across->largest_busbw();
        const double busbw = *report.inter_busbw_gbps;
        if (!across->all_correct())
            report.inter_check = "failed: wrong sums";
        else if (busbw < judgement.slow_fraction * report.expected_inter_gbps)
            report.inter_check = "slow: " + format_gbps(busbw) + " GB/s < " +
                                 format_gbps(judgement.slow_fraction * 100) + "% of the expected " +
                                 format_gbps(report.expected_inter_gbps) + " GB/s";
        else
            report.inter_check = "ok";
    } else {
        report.inter_check = "failed: no result (a node did not join, see the nodes' reasons)";
    }
    return report;
}

nlohmann::ordered_json report_to_json(const DoctorReport& r) {
    nlohmann::ordered_json j;
    j["schema"] = "slipway.doctor/1";
    j["cluster"] = r.cluster;
    j["job_id"] = r.job_id;
    j["created"] = r.created;
    j["partition"] = r.partition;
    j["fabric"] = r.fabric;
    j["expected_intra_gbps"] = r.expected_intra_gbps;
    j["expected_inter_gbps"] = r.expected_inter_gbps;
    j["slow_fraction"] = r.slow_fraction;
    j["ranks_per_node"] = r.ranks_per_node;
    j["backend"] = r.backend;
    j["inter_busbw_gbps"] = r.inter_busbw_gbps ? nlohmann::ordered_json(*r.inter_busbw_gbps) : nullptr;
    j["inter_check"] = r.inter_check;
    j["nodes"] = nlohmann::ordered_json::array();
    for (const NodeHealth& n : r.nodes) {
        nlohmann::ordered_json node;
        node["node"] = n.node;
        node["verdict"] = verdict_name(n.verdict);
        node["reasons"] = n.reasons;
        node["reported"] = n.reported;
        node["gpu_check"] = n.gpu_check;
        node["gpus"] = nlohmann::ordered_json::array();
        for (const GpuStatus& g : n.gpus) {
            nlohmann::ordered_json gpu;
            gpu["index"] = g.index;
            gpu["bus_id"] = g.bus_id;
            gpu["name"] = g.name;
            gpu["driver"] = g.driver;
            gpu["ecc_uncorrected"] = g.ecc_uncorrected ? nlohmann::ordered_json(*g.ecc_uncorrected) : nullptr;
            gpu["sm_clock_mhz"] = g.sm_clock_mhz ? nlohmann::ordered_json(*g.sm_clock_mhz) : nullptr;
            gpu["max_sm_clock_mhz"] =
                g.max_sm_clock_mhz ? nlohmann::ordered_json(*g.max_sm_clock_mhz) : nullptr;
            gpu["hw_slowdown"] = g.hw_slowdown ? nlohmann::ordered_json(*g.hw_slowdown) : nullptr;
            gpu["temperature_c"] = g.temperature_c ? nlohmann::ordered_json(*g.temperature_c) : nullptr;
            node["gpus"].push_back(gpu);
        }
        node["intra_busbw_gbps"] = n.intra_busbw_gbps ? nlohmann::ordered_json(*n.intra_busbw_gbps) : nullptr;
        node["rendezvous"] = n.rendezvous;
        j["nodes"].push_back(node);
    }
    j["problems"] = r.problems;
    j["exclude"] = r.bad_nodes();
    return j;
}

Result<DoctorReport> report_from_json(const nlohmann::json& j, const std::string& where) {
    DoctorReport r;
    try {
        if (j.at("schema") != "slipway.doctor/1")
            return Status::Error(where + ": schema is not slipway.doctor/1");
        r.cluster = j.at("cluster");
        r.job_id = j.at("job_id");
        r.created = j.at("created");
        r.partition = j.at("partition");
        r.fabric = j.at("fabric");
        r.expected_intra_gbps = j.at("expected_intra_gbps");
        r.expected_inter_gbps = j.at("expected_inter_gbps");
        r.slow_fraction = j.at("slow_fraction");
        r.ranks_per_node = j.at("ranks_per_node");
        r.backend = j.at("backend");
        if (!j.at("inter_busbw_gbps").is_null()) r.inter_busbw_gbps = j.at("inter_busbw_gbps").get<double>();
        r.inter_check = j.at("inter_check");
        auto optional_int = [](const nlohmann::json& v, auto& field) {
            if (!v.is_null()) field = v.get<typename std::decay_t<decltype(field)>::value_type>();
        };
        for (const auto& n : j.at("nodes")) {
            NodeHealth h;
            h.node = n.at("node");
            if (Status s = check_node_name(h.node); !s.ok()) return Status::Error(where + ": " + s.message());
            const std::string verdict = n.at("verdict");
            h.verdict = verdict == "ok"     ? NodeVerdict::kOk
                        : verdict == "slow" ? NodeVerdict::kSlow
                                            : NodeVerdict::kFailed;
            h.reasons = n.at("reasons").get<std::vector<std::string>>();
            h.reported = n.at("reported");
            h.gpu_check = n.at("gpu_check");
            for (const auto& g : n.at("gpus")) {
                GpuStatus gpu;
                gpu.index = g.at("index");
                gpu.bus_id = g.at("bus_id");
                gpu.name = g.at("name");
                gpu.driver = g.at("driver");
                optional_int(g.at("ecc_uncorrected"), gpu.ecc_uncorrected);
                optional_int(g.at("sm_clock_mhz"), gpu.sm_clock_mhz);
                optional_int(g.at("max_sm_clock_mhz"), gpu.max_sm_clock_mhz);
                optional_int(g.at("hw_slowdown"), gpu.hw_slowdown);
                optional_int(g.at("temperature_c"), gpu.temperature_c);
                h.gpus.push_back(gpu);
            }
            optional_int(n.at("intra_busbw_gbps"), h.intra_busbw_gbps);
            h.rendezvous = n.at("rendezvous");
            r.nodes.push_back(h);
        }
        r.problems = j.at("problems").get<std::vector<std::string>>();
    } catch (const nlohmann::json::exception& e) {
        return Status::Error(where + ": not a doctor report: " + e.what());
    }
    return r;
}

std::string format_report(const DoctorReport& r) {
    std::vector<std::vector<std::string>> rows = {
        {"NODE", "VERDICT", "BUSBW(GB/s)", "EXPECTED", "GPUS", "RENDEZVOUS", "REASONS"}};
    for (const NodeHealth& n : r.nodes) {
        std::string reasons;
        for (const std::string& reason : n.reasons)
            reasons += (reasons.empty() ? "" : "; ") + reason;
        rows.push_back({n.node, verdict_name(n.verdict),
                        n.intra_busbw_gbps ? format_gbps(*n.intra_busbw_gbps) : "-",
                        format_gbps(r.expected_intra_gbps), n.gpu_check,
                        n.rendezvous.empty() ? "-" : n.rendezvous, reasons.empty() ? "-" : reasons});
    }
    std::vector<size_t> width(rows[0].size(), 0);
    for (const auto& row : rows)
        for (size_t i = 0; i + 1 < row.size(); ++i)
            width[i] = std::max(width[i], row[i].size());
    std::ostringstream out;
    out << "doctor: cluster " << r.cluster << ", job " << r.job_id << ", " << r.created << ", "
        << (r.backend.empty() ? "?" : r.backend) << " x " << r.ranks_per_node << " ranks per node, fabric "
        << r.fabric << "\n";
    for (const auto& row : rows) {
        for (size_t i = 0; i < row.size(); ++i)
            out << row[i] << (i + 1 < row.size() ? std::string(width[i] - row[i].size() + 2, ' ') : "");
        out << "\n";
    }
    out << "across nodes: "
        << (r.inter_busbw_gbps ? format_gbps(*r.inter_busbw_gbps) + " GB/s (expected " +
                                     format_gbps(r.expected_inter_gbps) + "), "
                               : std::string())
        << r.inter_check << "\n";
    for (const std::string& p : r.problems)
        out << "problem: " << p << "\n";
    std::string exclude;
    for (const std::string& node : r.bad_nodes())
        exclude += (exclude.empty() ? "" : ",") + node;
    out << "exclude: " << (exclude.empty() ? "(none)" : exclude) << "\n";
    return out.str();
}

std::string default_doctor_dir() {
    return slipway_data_dir() + "/doctor";
}

Status DoctorReportStore::save(const DoctorReport& report) const {
    return write_file_atomically(path_for(report.cluster), report_to_json(report).dump(2) + "\n", 0644);
}

Result<DoctorReport> DoctorReportStore::load(const std::string& cluster) const {
    const std::string path = path_for(cluster);
    Result<std::string> text = read_local_file(path);
    if (!text.ok())
        return Status::Error(StatusCode::kNotFound, "no doctor report for cluster \"" + cluster + "\" (" +
                                                        path + "): run `slipway doctor " + cluster +
                                                        "` first");
    const nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_discarded()) return Status::Error(path + ": not JSON");
    return report_from_json(j, path);
}

Status check_node_name(const std::string& node) {
    static const std::regex name("[A-Za-z0-9._-]+");
    if (!std::regex_match(node, name))
        return Status::Error("\"" + node + "\" is not a Slurm node name ([A-Za-z0-9._-]+)");
    return Status::Ok();
}

}  // namespace slipway::remote
