// resolve_dist_env and the Slurm list parsers of env.h.
#include "dist/env.h"

#include "dist/rendezvous.h"

#include <cstdlib>
#include <stdexcept>
#include <tuple>

namespace slipway::dist {
namespace {

Result<int64_t> parse_int(const std::string& name, const std::string& text) {
    try {
        size_t used = 0;
        const long long v = std::stoll(text, &used);
        if (used != text.size()) throw std::invalid_argument(text);
        return static_cast<int64_t>(v);
    } catch (const std::exception&) {
        return Status::Error(name + "=\"" + text + "\" is not an integer");
    }
}

// Expands one host pattern without top-level commas, e.g. "node[1-2]-gpu[01,03]".
Status expand_pattern(const std::string& pattern, std::vector<std::string>& out) {
    const size_t open = pattern.find('[');
    if (open == std::string::npos) {
        if (pattern.find(']') != std::string::npos)
            return Status::Error("unbalanced ']' in \"" + pattern + "\"");
        out.push_back(pattern);
        return Status::Ok();
    }
    const size_t close = pattern.find(']', open);
    if (close == std::string::npos) return Status::Error("unbalanced '[' in \"" + pattern + "\"");
    const std::string prefix = pattern.substr(0, open), body = pattern.substr(open + 1, close - open - 1),
                      rest = pattern.substr(close + 1);
    size_t start = 0;
    while (start <= body.size()) {
        const size_t comma = body.find(',', start);
        const std::string range =
            body.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        const size_t dash = range.find('-');
        const std::string low = range.substr(0, dash),
                          high = dash == std::string::npos ? low : range.substr(dash + 1);
        Result<int64_t> a = parse_int("range", low), b = parse_int("range", high);
        if (low.empty() || !a.ok() || !b.ok() || *b < *a)
            return Status::Error("bad range \"" + range + "\" in \"" + pattern + "\"");
        for (int64_t v = *a; v <= *b; ++v) {
            std::string number = std::to_string(v);
            if (number.size() < low.size())
                number.insert(0, low.size() - number.size(), '0');  // keep zero padding
            std::vector<std::string> tails;
            const Status s = expand_pattern(rest, tails);
            if (!s.ok()) return s;
            for (const std::string& tail : tails)
                out.push_back(prefix + number + tail);
        }
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return Status::Ok();
}

}  // namespace

EnvLookup process_env() {
    return [](const std::string& name) -> std::optional<std::string> {
        const char* v = std::getenv(name.c_str());
        if (v == nullptr) return std::nullopt;
        return std::string(v);
    };
}

Result<std::vector<std::string>> expand_nodelist(const std::string& nodelist) {
    std::vector<std::string> hosts;
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= nodelist.size(); ++i) {
        const char c = i < nodelist.size() ? nodelist[i] : ',';
        if (c == '[') ++depth;
        if (c == ']') --depth;
        if (c != ',' || depth != 0) continue;
        const std::string part = nodelist.substr(start, i - start);
        start = i + 1;
        if (part.empty()) continue;
        const Status s = expand_pattern(part, hosts);
        if (!s.ok()) return Status::Error("nodelist \"" + nodelist + "\": " + s.message());
    }
    if (depth != 0) return Status::Error("nodelist \"" + nodelist + "\": unbalanced brackets");
    if (hosts.empty()) return Status::Error("nodelist \"" + nodelist + "\" names no host");
    return hosts;
}

Result<std::vector<int64_t>> expand_tasks_per_node(const std::string& text) {
    std::vector<int64_t> out;
    size_t start = 0;
    while (start < text.size()) {
        size_t comma = text.find(',', start);
        if (comma == std::string::npos) comma = text.size();
        const std::string item = text.substr(start, comma - start);
        const size_t paren = item.find("(x");
        Result<int64_t> count = parse_int("SLURM_TASKS_PER_NODE", item.substr(0, paren));
        if (!count.ok()) return count.status();
        int64_t repeat = 1;
        if (paren != std::string::npos) {
            if (item.back() != ')')
                return Status::Error("SLURM_TASKS_PER_NODE=\"" + text + "\": bad item \"" + item + "\"");
            Result<int64_t> r =
                parse_int("SLURM_TASKS_PER_NODE", item.substr(paren + 2, item.size() - paren - 3));
            if (!r.ok()) return r.status();
            repeat = *r;
        }
        out.insert(out.end(), static_cast<size_t>(repeat), *count);
        start = comma + 1;
    }
    return out;
}

Result<DistEnv> resolve_dist_env(const EnvLookup& env) {
    DistEnv d;
    auto get_int = [&env](const std::string& name, int64_t fallback) -> Result<int64_t> {
        const std::optional<std::string> v = env(name);
        if (!v || v->empty()) return fallback;
        return parse_int(name, *v);
    };
    const bool torchrun = env("RANK") && env("WORLD_SIZE");
    const bool slurm = env("SLURM_PROCID").has_value();
    if (torchrun) {
        d.source = "torchrun";
        for (auto [name, field, fallback] :
             {std::tuple{"RANK", &d.rank, int64_t{0}}, std::tuple{"WORLD_SIZE", &d.world_size, int64_t{1}},
              std::tuple{"LOCAL_RANK", &d.local_rank, int64_t{0}}}) {
            Result<int64_t> v = get_int(name, fallback);
            if (!v.ok()) return v.status();
            *field = *v;
        }
        Result<int64_t> local_world = get_int("LOCAL_WORLD_SIZE", d.world_size);
        if (!local_world.ok()) return local_world.status();
        d.local_world_size = *local_world;
        Result<int64_t> group = get_int("GROUP_RANK", d.rank / std::max<int64_t>(1, d.local_world_size));
        if (!group.ok()) return group.status();
        d.node_rank = *group;
        d.master_addr = env("MASTER_ADDR").value_or("127.0.0.1");
        if (slurm) {  // both present (torchrun inside srun): they must agree on the world
            Result<int64_t> tasks = get_int("SLURM_NTASKS", d.world_size);
            if (tasks.ok() && *tasks != d.world_size && *tasks * d.local_world_size != d.world_size &&
                *tasks != 1) {
                return Status::Error("WORLD_SIZE=" + std::to_string(d.world_size) +
                                     " (torchrun) disagrees with SLURM_NTASKS=" + std::to_string(*tasks));
            }
        }
    } else if (slurm) {
        d.source = "slurm";
        for (auto [name, field, fallback] : {std::tuple{"SLURM_PROCID", &d.rank, int64_t{0}},
                                             std::tuple{"SLURM_NTASKS", &d.world_size, int64_t{1}},
                                             std::tuple{"SLURM_LOCALID", &d.local_rank, int64_t{0}},
                                             std::tuple{"SLURM_NODEID", &d.node_rank, int64_t{0}}}) {
            Result<int64_t> v = get_int(name, fallback);
            if (!v.ok()) return v.status();
            *field = *v;
        }
        d.local_world_size = d.world_size;
        if (const auto per_node = env("SLURM_TASKS_PER_NODE")) {
            Result<std::vector<int64_t>> tasks = expand_tasks_per_node(*per_node);
            if (!tasks.ok()) return tasks.status();
            if (d.node_rank >= static_cast<int64_t>(tasks->size())) {
                return Status::Error("SLURM_NODEID=" + std::to_string(d.node_rank) +
                                     " but SLURM_TASKS_PER_NODE=\"" + *per_node + "\" lists " +
                                     std::to_string(tasks->size()) + " nodes");
            }
            d.local_world_size = (*tasks)[static_cast<size_t>(d.node_rank)];
        }
        const std::optional<std::string> nodelist =
            env("SLURM_STEP_NODELIST") ? env("SLURM_STEP_NODELIST") : env("SLURM_JOB_NODELIST");
        if (env("MASTER_ADDR")) {
            d.master_addr = *env("MASTER_ADDR");
        } else if (nodelist) {
            Result<std::vector<std::string>> hosts = expand_nodelist(*nodelist);
            if (!hosts.ok()) return hosts.status();
            d.master_addr = hosts->front();
        }
        d.scope = env("SLURM_JOB_ID").value_or("") + "." + env("SLURM_STEP_ID").value_or("");
    }
    d.secret = env(kSecretVariable).value_or("");
    d.port_file = env(kPortFileVariable).value_or("");
    if (env("MASTER_PORT")) {
        Result<int64_t> port = get_int("MASTER_PORT", d.master_port);
        if (!port.ok()) return port.status();
        if (*port < 1 || *port > 65535)
            return Status::Error("MASTER_PORT=" + std::to_string(*port) + " is not a TCP port");
        d.master_port = static_cast<int>(*port);
    } else if (!d.port_file.empty()) {
        d.master_port = 0;  // rank 0 binds a free one and publishes it
    } else if (d.source == "slurm" && d.world_size > 1) {
        return Status::Error(std::string("under Slurm a multi-rank step needs MASTER_PORT or ") +
                             kPortFileVariable +
                             " (a file on a filesystem every rank sees, where rank 0 publishes the port it "
                             "bound); Slipway's sbatch script sets the latter");
    }
    const std::string shown = " (" + d.source + ": rank " + std::to_string(d.rank) + ", world size " +
                              std::to_string(d.world_size) + ", local rank " + std::to_string(d.local_rank) +
                              ", local world size " + std::to_string(d.local_world_size) + ")";
    if (d.world_size < 1) return Status::Error("world size must be >= 1" + shown);
    if (d.rank < 0 || d.rank >= d.world_size) return Status::Error("rank must be in [0, world size)" + shown);
    if (d.local_world_size < 1 || d.local_rank < 0 || d.local_rank >= d.local_world_size) {
        return Status::Error("local rank must be in [0, local world size)" + shown);
    }
    if (d.local_world_size > d.world_size)
        return Status::Error("local world size exceeds the world size" + shown);
    return d;
}

}  // namespace slipway::dist
