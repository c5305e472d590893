// summarize_trace (profile_summary.h): classify, add up per category, and find the idle time.
#include "train/profile_summary.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <regex>
#include <sstream>

namespace slipway::train {
namespace {

bool matches(const std::string& name, const std::regex& pattern) {
    return std::regex_search(name, pattern);
}

std::vector<std::string> input_types(const nlohmann::json& event) {
    std::vector<std::string> types;
    const auto args = event.find("args");
    if (args == event.end() || !args->is_object()) return types;
    const auto found = args->find("Input type");
    if (found == args->end() || !found->is_array()) return types;
    for (const auto& t : *found)
        if (t.is_string()) types.push_back(t.get<std::string>());
    return types;
}

int64_t external_id(const nlohmann::json& event) {
    const auto args = event.find("args");
    if (args == event.end() || !args->is_object()) return -1;
    const auto found = args->find("External id");
    return found != args->end() && found->is_number_integer() ? found->get<int64_t>() : -1;
}

struct Interval {
    double begin, end;  // microseconds
};

// Total length of the union of intervals.
double covered(std::vector<Interval> spans) {
    std::sort(spans.begin(), spans.end(),
              [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
    double total = 0, open = 0, close = -1;
    for (const Interval& s : spans) {
        if (s.begin > close) {
            if (close > open) total += close - open;
            open = s.begin;
            close = s.end;
        } else {
            close = std::max(close, s.end);
        }
    }
    if (close > open) total += close - open;
    return total;
}

std::string event_name(const nlohmann::json& e) {
    const auto name = e.find("name");
    return name != e.end() && name->is_string() ? name->get<std::string>() : std::string();
}

std::string event_cat(const nlohmann::json& e) {
    const auto cat = e.find("cat");
    return cat != e.end() && cat->is_string() ? cat->get<std::string>() : std::string();
}

}  // namespace

std::string profile_category(const std::string& name, const std::vector<std::string>& types) {
    static const std::regex attention("flash|fmha|attention|attn|sdpa|_mha|mha_", std::regex::icase);
    static const std::regex gemm(
        "gemm|gemv|cutlass|xmma|nvjet|cublas|splitk|aten::(mm|addmm|bmm|baddbmm|"
        "addmv|mv|dot|linear|matmul)$",
        std::regex::icase);
    static const std::regex copies(
        "copy|cast|CatArray|concat|aten::(to|cat|stack|clone|contiguous|_to_copy)$", std::regex::icase);
    if (matches(name, attention)) return "attention";
    if (matches(name, gemm)) {
        bool bf16 = false, fp32 = false;
        for (const std::string& t : types) {
            bf16 = bf16 || t == "c10::BFloat16";
            fp32 = fp32 || t == "float";
        }
        static const std::regex bf16_name("bf16|bfloat16", std::regex::icase);
        static const std::regex fp32_name("sgemm|f32f32|tf32|fp32", std::regex::icase);
        if (bf16 || (types.empty() && matches(name, bf16_name))) return "bf16 GEMM";
        if (fp32 || (types.empty() && matches(name, fp32_name))) return "fp32 GEMM";
        return "GEMM (other dtype)";
    }
    if (matches(name, copies)) return "copies and casts";
    return "elementwise/reduction";
}

ProfileSummary summarize_trace(const nlohmann::json& trace, int64_t steps, double wall_ms) {
    ProfileSummary summary;
    summary.steps = std::max<int64_t>(steps, 1);
    summary.wall_ms_per_step = wall_ms / static_cast<double>(summary.steps);
    std::map<std::string, double> us;  // category -> microseconds over all steps
    struct NameTotal {
        std::string category;
        double us = 0;
        int64_t calls = 0;
    };
    std::map<std::string, NameTotal> by_name;
    auto count = [&](const std::string& name, const std::string& category, double dur) {
        us[category] += dur;
        NameTotal& t = by_name[name];
        t.category = category;
        t.us += dur;
        ++t.calls;
    };
    const auto events_it = trace.find("traceEvents");
    const nlohmann::json no_events = nlohmann::json::array();
    const nlohmann::json& events = events_it != trace.end() && events_it->is_array() ? *events_it : no_events;

    std::map<int64_t, std::vector<std::string>> op_types;  // External id -> the launching op's input types
    bool device = false;
    for (const auto& e : events) {
        if (!e.is_object()) continue;
        const std::string cat = event_cat(e);
        if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") device = true;
        if (cat == "cpu_op") {
            const int64_t id = external_id(e);
            if (id >= 0) op_types[id] = input_types(e);
        }
    }
    double busy_us = 0;
    if (device) {
        summary.source = "GPU kernels";
        std::vector<Interval> spans;
        for (const auto& e : events) {
            if (!e.is_object() || !e.contains("dur") || !e["dur"].is_number()) continue;
            const std::string cat = event_cat(e);
            const double dur = e["dur"].get<double>(), ts = e.value("ts", 0.0);
            if (cat == "gpu_memcpy" || cat == "gpu_memset") {
                count(event_name(e), "memcpy", dur);
            } else if (cat == "kernel") {
                const auto types = op_types.find(external_id(e));
                const std::string name = event_name(e);
                count(name,
                      profile_category(name,
                                       types != op_types.end() ? types->second : std::vector<std::string>()),
                      dur);
            } else {
                continue;
            }
            ++summary.events;
            spans.push_back({ts, ts + dur});
        }
        busy_us = covered(spans);
    } else {
        // CPU: each operator's self time (its duration less its direct children's on the same thread).
        summary.source = "CPU operators (self time)";
        struct Op {
            double begin, end;
            std::string name;
            std::vector<std::string> types;
        };
        std::map<std::string, std::vector<Op>> by_thread;
        for (const auto& e : events) {
            if (!e.is_object() || event_cat(e) != "cpu_op" || !e.contains("dur") || !e["dur"].is_number())
                continue;
            const double ts = e.value("ts", 0.0);
            by_thread[e.contains("tid") ? e["tid"].dump() : ""].push_back(
                {ts, ts + e["dur"].get<double>(), event_name(e), input_types(e)});
        }
        std::vector<Interval> spans;
        for (auto& [tid, ops] : by_thread) {
            std::sort(ops.begin(), ops.end(), [](const Op& a, const Op& b) {
                return a.begin < b.begin || (a.begin == b.begin && a.end > b.end);
            });
            std::vector<std::pair<const Op*, double>> stack;  // open ops and their children's time
            auto close = [&](const std::pair<const Op*, double>& top) {
                count(top.first->name, profile_category(top.first->name, top.first->types),
                      (top.first->end - top.first->begin) - top.second);
            };
            for (const Op& op : ops) {
                while (!stack.empty() && stack.back().first->end <= op.begin) {
                    close(stack.back());
                    stack.pop_back();
                }
                if (stack.empty()) {
                    spans.push_back({op.begin, op.end});
                } else {
                    stack.back().second += op.end - op.begin;
                }
                stack.push_back({&op, 0.0});
                ++summary.events;
            }
            while (!stack.empty()) {
                close(stack.back());
                stack.pop_back();
            }
        }
        busy_us = covered(spans);
    }
    us["host gaps"] = std::max(0.0, wall_ms * 1000.0 - busy_us);
    for (const auto& [name, total] : by_name)
        summary.top.push_back(
            {name, total.category, total.us / 1000.0 / static_cast<double>(summary.steps), total.calls});
    std::sort(summary.top.begin(), summary.top.end(),
              [](const ProfileSummary::Top& a, const ProfileSummary::Top& b) {
                  return a.ms_per_step > b.ms_per_step;
              });
    if (summary.top.size() > 12) summary.top.resize(12);
    for (const char* category : kProfileCategories) {
        const double ms = us[category] / 1000.0 / static_cast<double>(summary.steps);
        summary.rows.push_back(
            {category, ms, summary.wall_ms_per_step > 0 ? ms / summary.wall_ms_per_step : 0});
    }
    return summary;
}

std::string profile_table(const ProfileSummary& summary) {
    std::ostringstream out;
    char line[256];
    std::snprintf(line, sizeof line, "profile: %lld step(s), %.1f ms a step; %s (%lld events)\n",
                  static_cast<long long>(summary.steps), summary.wall_ms_per_step, summary.source.c_str(),
                  static_cast<long long>(summary.events));
    out << line;
    std::snprintf(line, sizeof line, "| %-22s | %12s | %7s |\n", "category", "ms per step", "share");
    out << line << "|------------------------|--------------|---------|\n";
    for (const ProfileRow& row : summary.rows) {
        std::snprintf(line, sizeof line, "| %-22s | %12.2f | %6.1f%% |\n", row.category.c_str(),
                      row.ms_per_step, 100.0 * row.share);
        out << line;
    }
    if (!summary.top.empty()) out << "profile: the largest, per step:\n";
    for (const ProfileSummary::Top& t : summary.top) {
        const std::string name = t.name.size() > 110 ? t.name.substr(0, 107) + "..." : t.name;
        std::snprintf(line, sizeof line, "  %8.2f ms %6lld x  %-22s %s\n", t.ms_per_step,
                      static_cast<long long>(t.calls / summary.steps), t.category.c_str(), name.c_str());
        out << line;
    }
    return out.str();
}

}  // namespace slipway::train
