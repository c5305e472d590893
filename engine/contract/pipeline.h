// A pipeline (`schema: "slipway.pipeline/1"`): the seed-001 chain of engine commands as one JSON file. A
// name, shared variables and an ordered list of steps (tokenizer, adapt-vocab, train, lep, eval); each step
// names its output, and later steps refer to it. Parsing and validation are JSON only (no torch, no Qt):
// errors name the JSON pointer, like run configs. Running is the caller's (the CLI runs steps locally or as
// Slurm jobs).
//
// References, inside any string of a step (a train step's config included):
//   ${vars.NAME}       a value from "vars" (vars may use ${run} only)
//   ${steps.NAME.out}  the output of an EARLIER step (a folder, or a file for tokenizer and eval)
//   ${run}             the pipeline's own folder (local: its run folder; Slurm: its folder on the cluster)
// Steps run in file order and may only refer to steps before them, so a chain has no cycles by construction.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "contract/run_config.h"
#include "contract/status.h"

namespace slipway {

inline constexpr const char* kPipelineSchema = "slipway.pipeline/1";

struct PipelineStep {
    std::string name;  // [A-Za-z0-9_-]+, unique
    std::string kind;  // tokenizer | adapt-vocab | train | lep | eval
    // The step object as written, references unresolved; a train step's "config" given as a path is
    // replaced by the document read from that file.
    nlohmann::json spec;
    std::vector<std::string> uses;  // the steps it refers to, in order of first use
    int cpus = 4;                   // non-train steps on Slurm: --cpus-per-task
    std::string time = "01:00:00";  // non-train steps on Slurm: --time
    bool is_training() const { return kind == "train"; }
};

struct Pipeline {
    std::string name;
    std::map<std::string, std::string> vars;
    std::vector<PipelineStep> steps;
};

struct ParsedPipeline {
    Pipeline pipeline;
    ConfigProblems problems;
};

// True when the document says it is a pipeline (its "schema" is kPipelineSchema, or it has "steps" and no
// run config sections): `slipway submit` takes either.
bool is_pipeline_document(const nlohmann::json& document);

// JSON -> Pipeline with every problem named by pointer. `base_dir`: where a train step's config path is
// read from (the pipeline file's folder).
ParsedPipeline parse_pipeline(const nlohmann::json& document, const std::string& base_dir);
// read + parse; the error lists every problem, prefixed with the file name.
Result<Pipeline> load_pipeline(const std::string& path);

// What resolving a step needs from the runner.
struct StepContext {
    std::string run_dir;                      // ${run}
    std::map<std::string, std::string> outs;  // outputs of the steps already placed
    // A literal relative input path of a non-train step -> the path the engine gets (local: absolute under
    // the input folder; Slurm: uploaded). Empty function: left as written.
    std::function<Result<std::string>(const std::string& pointer, const std::string& path)> input;
};

// A step ready to run: the engine's arguments (after the program name), or a run config.
struct ResolvedStep {
    std::vector<std::string> engine_args;  // non-train steps
    std::string out;                       // what ${steps.NAME.out} becomes (train: set by the runner)
    std::string stdout_file;               // eval: its JSON on stdout goes to this file
    std::optional<RunConfig> config;       // train steps, references resolved, validated
};

Result<ResolvedStep> resolve_step(const Pipeline& pipeline, size_t index, const StepContext& context);

// The field table of each step kind, for `slipway pipeline kinds` and the docs: "kind: field (required)...".
std::string describe_step_kinds();

}  // namespace slipway
