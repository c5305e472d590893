// A run's life as Slipway tracks it, whatever started it (This computer, a Slurm job, a log file). The
// state is an enum everywhere inside the app; it becomes text only at the edges: the runs.state column
// (to_db_text / from_db_text: stable lower-case words, never translated), Slurm's job state words
// (from_slurm), a finished log's run_stop (from_run_stop), texts older databases and JSON run records hold
// (from_legacy_text), and the pages (display_text in core/run_state_display.h: translated, for display only).
// Qt-free: the run service (app/service) and the CLI hold it too.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/run_metrics.h"

namespace slipway::app {

enum class RunState {
    kSubmitting,   // deploy + sbatch under way (cluster), engine starting (local)
    kPending,      // queued by Slurm
    kRunning,      // the job or the local engine is alive
    kStalled,      // running, but no new step for a long while (RunWatch); back to kRunning on a step
    kCompleted,    // Slurm COMPLETED, exit code 0, run_stop status success
    kFailed,       // Slurm's failures, exit code != 0, a submit error, run_stop with another status
    kCancelled,    // cancelled by a user (scancel, Slurm REVOKED, a local cancel)
    kTimeout,      // the job hit its time limit or deadline
    kIncomplete,   // a log that ended without run_stop, or stopped being followed
    kInterrupted,  // a local engine that died with the previous app session
    kUnknown,      // Slurm forgot the job and the log has no run_stop; run_stop without a status
    kReading,      // a log file being read (File > Open log)
    kFollowing,    // a log on a cluster opened by hand, being followed
};

// Every state, in declaration order (tests and tables iterate it).
inline constexpr RunState kAllRunStates[] = {
    RunState::kSubmitting, RunState::kPending,     RunState::kRunning,   RunState::kStalled,
    RunState::kCompleted,  RunState::kFailed,      RunState::kCancelled, RunState::kTimeout,
    RunState::kIncomplete, RunState::kInterrupted, RunState::kUnknown,   RunState::kReading,
    RunState::kFollowing};

// The runs.state column's word: "submitting", "pending", "running", ... (the enumerator's name, lower case).
std::string_view to_db_text(RunState state);
// Exactly the words to_db_text writes; anything else is nullopt.
std::optional<RunState> from_db_text(std::string_view text);

// A Slurm job state as remote::normalize_job_state returns it (upper case, first word). Terminal Slurm
// states (remote::is_terminal_state) give terminal RunStates and the others live ones; a word Slurm may
// add later, and Slurm's own UNKNOWN, give kUnknown.
RunState from_slurm(std::string_view normalized_state);
// Slurm's word with the log's run_stop status beside it: a job Slurm no longer knows (UNKNOWN: accounting
// off, or the job aged out) whose log ended with run_stop "success" completed. The app's tracker and the run
// service both judge a followed job's end by it.
RunState from_slurm(std::string_view normalized_state, std::string_view log_status);

// A finished log: kIncomplete without run_stop, else from_run_stop_status of its status.
RunState from_run_stop(const RunMetrics& metrics);
// run_stop's status: "success" is kCompleted, an empty status kUnknown, any other (MLPerf's "aborted")
// kFailed. The status itself is worth showing beside the state.
RunState from_run_stop_status(std::string_view status);
// What a run_stop's status adds to its state's word: nothing for "success" or no status, else
// "run_stop status aborted".
std::string run_stop_detail(std::string_view status);

// Texts the Qt-free code writes in English, translated where they are shown (display_detail,
// run_state_display.h): the details the run service stores beside a state, and RunWatch's alerts (the
// stall's is also the stalled state's detail). "%1", "%2" in one are filled by fill_text().
extern const char* const kClosedWhileRunningDetail;  // slipway closed and stopped the engine
extern const char* const kOwnerEndedUnsaidDetail;    // another process's run whose process died untold
extern const char* const kProfileChangedDuringSubmitDetail;  // the submission's answer went with its session
extern const char* const kProfileRemovedDuringSubmitDetail;  // ... and its cluster profile with it
extern const char* const kProfileRemovedNotFollowedDetail;   // a live run whose cluster profile was removed
extern const char* const kStoppedFromElsewhereDetail;        // its engine obeyed another door's SIGTERM
extern const char* const kSubmissionInterruptedDetail;  // the startup sweep: a submission nobody finished
extern const char* const kStepStoppedDetail;            // a pipeline's step, stopped with its pipeline
extern const char* const kSlurmForgotDetail;            // "...; its log's run_stop: %1"
extern const char* const kFinishedAlert;                // the log's run_stop said success
extern const char* const kStoppedWithStatusAlert;       // "... %1": any other run_stop status
extern const char* const kTargetReachedAlert;           // "... %1 (target %2)"
extern const char* const kExitedCleanAlert;             // exit code 0
extern const char* const kExitedWithCodeAlert;          // "... %1"
extern const char* const kStalledAlert;                 // "... %1 s (median step interval %2 ms)"
// `source` with "%1", "%2", ... replaced by `arguments` in order.
std::string fill_text(const char* source, std::initializer_list<std::string_view> arguments);
// The translator's source text of one of those texts ("run_stop status %1") and the arguments it carries
// ("aborted"); nullopt for any other text (Slurm's reason, the engine's last words, a user's).
struct TextSource {
    const char* source = nullptr;
    std::vector<std::string> arguments;
};
std::optional<TextSource> text_source(std::string_view text);

// A state text from before schema 2 (or a JSON record's last_state), never failing: our own words as
// to_db_text writes them, "opened" (a file being read), any Slurm word (upper case, including the
// records' "SUBMITTED"), "stopped" (run_stop without a status), and otherwise a run_stop status written
// verbatim (-> from_run_stop_status). Empty text is kUnknown. What the text said beyond the state is kept:
// the Slurm word (not "SUBMITTED": ours) and the run_stop status.
struct LegacyState {
    RunState state = RunState::kUnknown;
    std::string slurm_state;      // "NODE_FAIL"; empty when the text was not Slurm's
    std::string run_stop_status;  // "aborted"; empty when the text was not a run_stop status
};
LegacyState parse_legacy_text(std::string_view text);
inline RunState from_legacy_text(std::string_view text) {
    return parse_legacy_text(text).state;
}

// The state will not change any more: completed, failed, cancelled, timeout, incomplete, interrupted,
// unknown.
bool is_terminal(RunState state);
// Only kCompleted means the run did what it was asked.
inline bool is_success(RunState state) {
    return state == RunState::kCompleted;
}
// Someone is still at work on the run: submitting, pending, running, stalled, reading, following.
inline bool is_live(RunState state) {
    return !is_terminal(state);
}

// The untranslated source of a state's display text ("timed out"): what display_text translates.
const char* display_source_text(RunState state);

// How a state write treats the state already stored.
enum class StateWrite {
    kAlways,
    // Pollers (Slurm's word, a follower): an ended run is never made live again, nor a stalled one running.
    kIfNotEnded,
};

}  // namespace slipway::app
