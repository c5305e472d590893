// Renders the doctor job (see doctor_script.h): straight-line bash, every value quoted or refused.
#include "remote/slurm/doctor_script.h"

#include <regex>
#include <sstream>

#include "remote/slurm/doctor_report.h"
#include "remote/slurm/rendezvous_script.h"
#include "remote/ssh/shell_quote.h"

namespace slipway::remote {
namespace {

Status check_range(const char* what, long long value, long long low, long long high) {
    if (value < low || value > high)
        return Status::Error(std::string(what) + " must be in [" + std::to_string(low) + ", " +
                             std::to_string(high) + "], got " + std::to_string(value));
    return Status::Ok();
}

// Partition, account and QOS as Slurm names them (the run config's /slurm fields accept the same).
Status check_slurm_word(const char* what, const std::string& value) {
    static const std::regex word("[A-Za-z0-9_.,+-]+");
    if (!value.empty() && !std::regex_match(value, word))
        return Status::Error(std::string(what) + " \"" + value +
                             "\" is not a Slurm name ([A-Za-z0-9_.,+-]+)");
    return Status::Ok();
}

Result<std::string> node_list(const std::vector<std::string>& nodes) {
    std::string list;
    for (const std::string& node : nodes) {
        if (Status s = check_node_name(node); !s.ok()) return s;
        list += (list.empty() ? "" : ",") + node;
    }
    return list;
}

// `export NAME=<quoted value>`.
Result<std::string> exported(const char* name, const std::string& value, const char* what) {
    Result<std::string> quoted = shell_quote(value, what);
    if (!quoted.ok()) return quoted.status();
    return std::string("export ") + name + "=" + *quoted + "\n";
}

const std::string kNodeScript = R"SCRIPT(#!/bin/bash
# Slipway doctor: the checks one node runs, started by doctor.sbatch through srun. "node": nvidia-smi and
# bench-comm within this node; "across": the master's rendezvous port, then bench-comm across all nodes;
# "link": bench-comm between the master and one other node ($DOCTOR_PEER), one rank on each.
# Each result is one line "SLIPWAY-DOCTOR <node> <check> <payload>"; every command has a time limit, so a
# hung GPU or peer ends as a reason, never as a hang. Parameters come from the job's DOCTOR_* variables.
set -uo pipefail
mode=${1:?usage: node_check.sh node|across|link}
node=${SLURMD_NODENAME:-$(hostname -s)}
limit=${DOCTOR_STEP_TIMEOUT_S:?}
engine=${DOCTOR_ENGINE:?}
# Collectives give up a little before the step's own limit, so the engine names what it waited for.
collective_limit=$((limit > 20 ? limit - 10 : limit))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

say() { printf '%s %s %s %s\n' SLIPWAY-DOCTOR "$node" "$1" "$2"; }
# Why a timed command failed, on one line: timeout's 124 (or 137 after -k) means it ran out of time.
failure() {
  if [ "$1" -eq 124 ] || [ "$1" -eq 137 ]; then
    echo "timed out after $limit s"
  else
    # The engine's own last words, not launch's summary of them.
    why=$(tr -d '\r' <"$2" | grep -v -e '^[[:space:]]*$' -e '^launch: ' | tail -n 1)
    [ -n "$why" ] || why=$(tr -d '\r' <"$2" | grep -v '^[[:space:]]*$' | tail -n 1)
    echo "exit $1: ${why:0:300}"
  fi
}
json_line() { grep '^{' "$1" | tail -n 1; }

case $mode in
node)
  say begin "$(hostname)"
  if ! command -v nvidia-smi >/dev/null 2>&1; then
    say gpu-none "no nvidia-smi"
  elif timeout -k 5 "$limit" nvidia-smi --query-gpu="$DOCTOR_SMI_QUERY" --format=csv >"$tmp/smi" 2>"$tmp/smi.err"; then
    while IFS= read -r line; do say gpu-csv "$line"; done <"$tmp/smi"
  else
    say gpu-error "$(failure $? "$tmp/smi.err")"
  fi
  # Within the node: a local launch, so Slurm's task variables must not describe another world.
  if timeout -k 10 "$limit" env -u SLURM_PROCID "$engine" launch --nproc "$DOCTOR_RANKS_PER_NODE" --no-label -- \
    bench-comm --json --sizes "$DOCTOR_SIZES" --iters "$DOCTOR_ITERS" --timeout-s "$collective_limit" \
    >"$tmp/intra" 2>"$tmp/intra.err"; then
    say intra-json "$(json_line "$tmp/intra")"
  else
    say intra-error "$(failure $? "$tmp/intra.err")"
  fi
  say end node
  ;;
across)
  timeout -k 10 "$limit" "$engine" bench-comm --json --sizes "$DOCTOR_SIZES" --iters "$DOCTOR_ITERS" \
    --timeout-s "$collective_limit" >"$tmp/across" 2>"$tmp/across.err" &
  bench=$!
  # One probe per node of the master's rendezvous port: the port rank 0 publishes once its store listens.
  probe_limit=$((limit < 60 ? limit : 60))
  target="$MASTER_ADDR:(port not yet published)"
  started=$(date +%s%N)
  reached=
  if [ "${SLURM_LOCALID:-0}" -eq 0 ]; then
    while [ $((($(date +%s%N) - started) / 1000000000)) -lt "$probe_limit" ]; do
      port=
      [ -s "$SLIPWAY_RDZV_FILE" ] && read -r port _ <"$SLIPWAY_RDZV_FILE"
      # shellcheck disable=SC2016  # $0 and $1 are the inner shell's arguments
      if [[ "$port" =~ ^[0-9]+$ ]] && target=$MASTER_ADDR:$port &&
        timeout 5 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$MASTER_ADDR" "$port" 2>/dev/null; then
        reached=yes
        break
      fi
      kill -0 "$bench" 2>/dev/null || break # a bench-comm that ended tells more than the probe can
      sleep 0.2
    done
    reached_ms=$((($(date +%s%N) - started) / 1000000))
  fi
  wait "$bench"
  status=$?
  if ! [[ "$target" =~ :[0-9]+$ ]] && [ -s "$SLIPWAY_RDZV_FILE" ]; then
    read -r port _ <"$SLIPWAY_RDZV_FILE" # a bench-comm that ended before the first look had published it
    target=$MASTER_ADDR:$port
  fi
  if [ "${SLURM_LOCALID:-0}" -eq 0 ]; then
    if [ -n "$reached" ]; then
      say rendezvous "ok $target $reached_ms ms"
    elif [ "$status" -eq 0 ]; then
      say rendezvous "ok $target (bench-comm joined its store)"
    elif [ "$node" = "$MASTER_ADDR" ]; then
      say rendezvous "unknown $target: this master's bench-comm ended before its store listened"
    else
      say rendezvous "failed $target: no connection within $((reached_ms / 1000)) s"
    fi
  fi
  if [ "$status" -eq 0 ]; then
    if [ "${SLURM_PROCID:-0}" -eq 0 ]; then say across-json "$(json_line "$tmp/across")"; fi
  elif [ "${SLURM_LOCALID:-0}" -eq 0 ]; then
    say across-error "$(failure "$status" "$tmp/across.err")"
  fi
  ;;
link)
  # Rank 0 (on the master) prints the result; the line names the other node.
  if timeout -k 10 "$limit" "$engine" bench-comm --json --sizes "$DOCTOR_SIZES" --iters "$DOCTOR_ITERS" \
    --timeout-s "$collective_limit" >"$tmp/link" 2>"$tmp/link.err"; then
    if [ "${SLURM_PROCID:-0}" -eq 0 ]; then say link-json "$DOCTOR_PEER $(json_line "$tmp/link")"; fi
  else
    status=$?
    if [ "${SLURM_PROCID:-0}" -eq 0 ]; then say link-error "$DOCTOR_PEER $(failure "$status" "$tmp/link.err")"; fi
  fi
  ;;
*)
  echo "node_check.sh: unknown mode $mode" >&2
  exit 2
  ;;
esac
)SCRIPT";

}  // namespace

const std::string& doctor_node_script() {
    return kNodeScript;
}

Result<std::string> render_doctor_sbatch(const DoctorJobRequest& r) {
    if (r.doctor_dir.empty() || r.doctor_dir[0] != '/')
        return Status::Error("doctor folder must be absolute, got \"" + r.doctor_dir + "\"");
    if (r.engine.empty()) return Status::Error("no slipway-engine given for the nodes");
    const int nodes = r.nodelist.empty() ? r.nodes : static_cast<int>(r.nodelist.size());
    for (Status s :
         {check_range("--nodes", nodes, 1, 10000), check_range("--gpus-per-node", r.gpus_per_node, 0, 64),
          check_range("CPU ranks per node", r.cpu_ranks_per_node, 1, 256),
          check_range("--iters", r.iters, 1, 100000),
          check_range("--step-timeout", r.step_timeout_s, 5, 86400),
          check_range("job minutes", r.job_minutes, 1, 7 * 24 * 60),
          check_slurm_word("partition", r.partition), check_slurm_word("account", r.account),
          check_slurm_word("QOS", r.qos)}) {
        if (!s.ok()) return s;
    }
    static const std::regex sizes("[0-9]+(\\.[0-9]+)?[KMG]?(,[0-9]+(\\.[0-9]+)?[KMG]?)*");
    if (!std::regex_match(r.sizes, sizes))
        return Status::Error("--sizes \"" + r.sizes + "\" must be sizes like 1M,16M");
    static const std::regex image("[^\\s,]+");
    const std::string& image_name = r.environment.image;
    if (!image_name.empty() && !std::regex_match(image_name, image))
        return Status::Error("container image \"" + image_name + "\" must not contain spaces or commas");
    if (takes_image(r.environment.runtime) && image_name.empty())
        return Status::Error(std::string("the checks run with ") +
                             container_mode_name(r.environment.runtime) + ": a container image is needed");
    Result<std::string> nodelist = node_list(r.nodelist);
    Result<std::string> exclude = node_list(r.exclude);
    if (!nodelist.ok()) return nodelist.status();
    if (!exclude.ok()) return exclude.status();
    const int ranks_per_node = r.gpus_per_node > 0 ? r.gpus_per_node : r.cpu_ranks_per_node;

    std::ostringstream out;
    out << "#!/bin/bash\n";
    out << "# Slipway doctor: nvidia-smi and bench-comm on each of " << nodes
        << " node(s), then the rendezvous port and bench-comm across them.\n"
           "# Rendered by `slipway doctor`; results are the SLIPWAY-DOCTOR lines of doctor-<job id>.out.\n";
    std::vector<std::string> directives = {"--job-name=slipway-doctor", "--nodes=" + std::to_string(nodes),
                                           "--ntasks-per-node=" + std::to_string(ranks_per_node)};
    if (!nodelist->empty()) directives.push_back("--nodelist=" + *nodelist);
    if (!exclude->empty()) directives.push_back("--exclude=" + *exclude);
    if (r.gpus_per_node > 0) directives.push_back("--gres=gpu:" + std::to_string(r.gpus_per_node));
    directives.push_back("--time=" + std::to_string(r.job_minutes));
    if (!r.partition.empty()) directives.push_back("--partition=" + r.partition);
    if (!r.account.empty()) directives.push_back("--account=" + r.account);
    if (!r.qos.empty()) directives.push_back("--qos=" + r.qos);
    if (r.exclusive) directives.push_back("--exclusive");
    directives.push_back("--output=doctor-%j.out");
    for (const std::string& d : directives)
        out << "#SBATCH " << d << "\n";
    // No -e: a failed check is a result to report, not a reason to stop the others.
    out << "set -uo pipefail\n\n";

    Result<std::string> dir = shell_quote(r.doctor_dir, "doctor folder");
    if (!dir.ok()) return dir.status();
    out << "doctor_dir=" << *dir << "\n";
    out << "cd \"$doctor_dir\" || exit 2\n";
    const std::pair<const char*, std::string> variables[] = {
        {"DOCTOR_ENGINE", r.engine},
        {"DOCTOR_SIZES", r.sizes},
        {"DOCTOR_ITERS", std::to_string(r.iters)},
        {"DOCTOR_STEP_TIMEOUT_S", std::to_string(r.step_timeout_s)},
        {"DOCTOR_RANKS_PER_NODE", std::to_string(ranks_per_node)},
        {"DOCTOR_SMI_QUERY", kNvidiaSmiQuery},
    };
    for (const auto& [name, value] : variables) {
        Result<std::string> line = exported(name, value, name);
        if (!line.ok()) return line.status();
        out << *line;
    }
    std::vector<std::string> mounted = {"doctor_dir"};
    if (!r.engine_dir.empty()) {
        Result<std::string> engine_dir = shell_quote(r.engine_dir, "engine folder");
        if (!engine_dir.ok()) return engine_dir.status();
        out << "engine_dir=" << *engine_dir << "\n";
        mounted.push_back("engine_dir");
    }
    Result<std::string> environment = environment_lines(r.environment, mounted);
    if (!environment.ok()) return environment.status();
    out << *environment;
    out << "\n# Rendezvous as a training run has it: the first host is the master, where bench-comm's rank 0 "
           "binds a\n# free port and publishes it in the doctor's folder; its store takes only tasks with "
           "this "
           "job's secret.\n";
    out << rendezvous_lines("doctor_dir");
    out << "rm -f \"$SLIPWAY_RDZV_FILE\"  # a requeued job's old port\n";
    out << "echo \"SLIPWAY-DOCTOR - job $SLURM_JOB_ID nodes ${hosts[*]} master $MASTER_ADDR (port published "
           "in "
           "$SLIPWAY_RDZV_FILE)\"\n";
    out << "# Each step ends within its limit even when a node hangs (srun's --time is in minutes).\n";
    out << "step_limit=$((DOCTOR_STEP_TIMEOUT_S + 30))\n";
    out << "step_minutes=$(((step_limit + 59) / 60))\n\n";
    out << "echo \"SLIPWAY-DOCTOR - step node\"\n";
    out << "timeout -k 10 \"$step_limit\" srun --nodes=\"${#hosts[@]}\" --ntasks=\"${#hosts[@]}\" "
           "--ntasks-per-node=1 --cpus-per-task=\"$DOCTOR_RANKS_PER_NODE\" --time=\"$step_minutes\" "
           "--kill-on-bad-exit=0 \\\n"
           "  ${container[@]+\"${container[@]}\"} bash \"$doctor_dir/"
        << kDoctorNodeScriptName << "\" node\n";
    out << "echo \"SLIPWAY-DOCTOR - step node-exit $?\"\n";
    out << "echo \"SLIPWAY-DOCTOR - step across\"\n";
    out << "timeout -k 10 \"$step_limit\" srun --nodes=\"${#hosts[@]}\" "
           "--ntasks=$((${#hosts[@]} * DOCTOR_RANKS_PER_NODE)) --ntasks-per-node=\"$DOCTOR_RANKS_PER_NODE\" "
           "--time=\"$step_minutes\" --kill-on-bad-exit=0 \\\n"
           "  ${container[@]+\"${container[@]}\"} bash \"$doctor_dir/"
        << kDoctorNodeScriptName << "\" across\n";
    out << "echo \"SLIPWAY-DOCTOR - step across-exit $?\"\n";
    if (nodes >= 3) {
        // Each other node's link to the master alone: a slow crossing then names its node (with two nodes
        // one link cannot tell which end is slow).
        out << "echo \"SLIPWAY-DOCTOR - step links\"\n";
        out << "for peer in \"${hosts[@]:1}\"; do\n"
               "  SLIPWAY_RDZV_FILE=\"$doctor_dir/.slipway-rendezvous-$SLURM_JOB_ID-link-$peer\" "
               "DOCTOR_PEER=\"$peer\" \\\n"
               "    timeout -k 10 \"$step_limit\" srun --nodes=2 --ntasks=2 --ntasks-per-node=1 "
               "--nodelist=\"$MASTER_ADDR,$peer\" --time=\"$step_minutes\" --kill-on-bad-exit=0 \\\n"
               "    ${container[@]+\"${container[@]}\"} bash \"$doctor_dir/"
            << kDoctorNodeScriptName << "\" link\n";
        out << "done\n";
    }
    out << "echo \"SLIPWAY-DOCTOR - done\"\n";
    return out.str();
}

}  // namespace slipway::remote
