// Fuzz harness: the sbatch renderer fed hostile run configs (names, images, mounts, workdirs, Slurm
// words) and hostile engine and run.json paths. A script it renders must pass `bash -n` and, run with
// stand-ins for srun and scontrol, execute nothing but itself: no command outside the script's own, and
// the engine started with exactly the given path and run config as single words.
// Input: run config JSON, "\n----\n" the engine path, "\n----\n" the run.json path.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/run_config.h"
#include "fuzz_common.h"
#include "remote/slurm/cluster_profile.h"
#include "remote/slurm/sbatch_script.h"

using namespace slipway;
using namespace slipway::remote;

namespace {

// Stand-ins: srun records its arguments one per line (NUL-free: they came from a shell), scontrol names
// one host; od and tr (the rendezvous secret) are the system's own. Any other command the script runs is
// not found and recorded as an intrusion.
const std::string& sandbox() {
    static const std::string dir = [] {
        const std::string d = fuzz::scratch_dir() + "/sandbox";
        std::filesystem::create_directories(d + "/bin");
        std::filesystem::create_directories(d + "/run dir 'q' $(x)");
        fuzz::write_scratch(
            "sandbox/bin/srun",
            "#!/bin/bash\nfor a in \"$@\"; do printf 'ARG %s\\n' \"${a//$'\\n'/\\\\n}\"; done >> \"$LOG\"\n"
            "echo END >> \"$LOG\"\n");
        fuzz::write_scratch("sandbox/bin/scontrol", "#!/bin/bash\necho node1\n");
        fuzz::write_scratch(
            "sandbox/env.sh",
            "command_not_found_handle() { printf 'INTRUSION %s\\n' \"$1\" >> \"$LOG\"; return 127; }\n");
        std::filesystem::permissions(d + "/bin/srun", std::filesystem::perms::owner_all);
        std::filesystem::permissions(d + "/bin/scontrol", std::filesystem::perms::owner_all);
        for (const char* tool : {"od", "tr"}) {
            std::error_code exists;  // a folder left by an earlier process with this id
            std::filesystem::create_symlink(std::string("/usr/bin/") + tool, d + "/bin/" + tool, exists);
        }
        return d;
    }();
    return dir;
}

std::string read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const auto parts = fuzz::split_parts(fuzz::as_text(data, size), 3);
    const nlohmann::json doc = nlohmann::json::parse(parts[0], nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return 0;
    ParsedRunConfig parsed = parse_run_config(doc);
    if (!parsed.problems.empty()) return 0;

    ClusterProfile profile;
    profile.name = "fuzz";
    profile.host = "login";
    profile.container =
        parsed.config.slurm.container_image.empty() ? ContainerMode::kNone : ContainerMode::kPyxis;
    SbatchInputs inputs;
    inputs.run_dir = sandbox() + "/run dir 'q' $(x)";
    if (parts.size() > 1) inputs.engine = std::string(parts[1]);
    if (parts.size() > 2) inputs.run_json = std::string(parts[2]);
    Result<std::string> script = render_sbatch_script(parsed.config, profile, inputs);
    if (!script.ok()) return 0;

    const std::string path = fuzz::write_scratch("sandbox/job.sbatch", *script);
    const std::string log = sandbox() + "/log";
    std::filesystem::remove(log);
    FUZZ_CHECK(std::system(("/bin/bash -n " + path + " 2>/dev/null").c_str()) == 0, *script);
    const std::string run = "/usr/bin/env -i PATH=" + sandbox() + "/bin BASH_ENV=" + sandbox() +
                            "/env.sh LOG=" + log + " SLURM_JOB_ID=7 SLURM_JOB_NODELIST=node1 /bin/bash " +
                            path + " >/dev/null 2>&1";
    (void)std::system(run.c_str());
    const std::string record = read_all(log);
    FUZZ_CHECK(record.find("INTRUSION") == std::string::npos, record + "\n" + *script);

    // The last srun ends with: <engine> train <run.json>, each one word, as given.
    const bool container = profile.container == ContainerMode::kPyxis;
    const std::string engine = !inputs.engine.empty() ? inputs.engine
                               : container            ? "slipway-engine"
                                                      : inputs.run_dir + "/slipway-engine";
    const std::string run_json =
        inputs.run_json[0] == '/' ? inputs.run_json : inputs.run_dir + "/" + inputs.run_json;
    std::string escaped_engine = engine, escaped_json = run_json;
    for (std::string* s : {&escaped_engine, &escaped_json}) {
        std::string out;
        for (char c : *s)
            out += c == '\n' ? std::string("\\n") : std::string(1, c);
        *s = out;
    }
    const std::string tail = "ARG " + escaped_engine + "\nARG train\nARG " + escaped_json + "\nEND\n";
    FUZZ_CHECK(
        record.size() >= tail.size() && record.compare(record.size() - tail.size(), tail.size(), tail) == 0,
        record + "\nexpected tail:\n" + tail + "\n" + *script);
    return 0;
}
