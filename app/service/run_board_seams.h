// What the run board (run_board.h) talks to, as small Qt-free seams: the follows of log files on this
// machine, the clusters' sessions, the queue a run's points are written through, a timer, and whoever is told
// what happened. The GUI's RunTracker implements them over FollowService, ClusterSessions, HistoryWriter,
// QTimer and its signals; tests implement them with fakes that answer when told to.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "contract/mllog.h"
#include "contract/run_config.h"
#include "contract/status.h"
#include "core/run_metrics.h"
#include "core/run_watch.h"

namespace slipway::app {

// One batch of a followed log, as the follower read it (a file on this machine or a log on a cluster).
struct LogBatch {
    int follow_id = 0;
    bool reset = false;     // the log was rewritten: what came before is gone
    bool missing = false;   // the log does not exist yet
    bool finished = false;  // the last batch of a finish request
    bool behind = false;    // more bytes are waiting (a large log read in pieces)
    uint64_t offset = 0;    // bytes consumed through the last complete line
    int64_t bad_lines = 0;
    const std::vector<MllogEvent>* events = nullptr;  // the MLLOG events, in order (never null)
    // The text of its last lines, for a Slurm job's requeue announcement (a cluster's follows only).
    std::vector<std::string> lines;
};

// Follows of log files on this machine; each batch comes back through RunBoard::file_batch.
class LogFollows {
public:
    virtual ~LogFollows() = default;
    // A follow of `path` from byte `offset`; its id.
    virtual int follow(const std::string& path, uint64_t offset) = 0;
    // Reads what is left (a last line without '\n' too), sends it as a finished batch and stops.
    virtual void finish(int follow_id) = 0;
    virtual void stop(int follow_id) = 0;
};

// The clusters, by profile name, each over its session (one connection, its own thread). Every request is
// answered later through RunBoard's answer calls, with the request or follow id returned here; ids start at
// 1, and 0 means nothing was asked (the profile has no session any more).
class ClusterLinks {
public:
    virtual ~ClusterLinks() = default;
    // Whether the profile exists. Its session is made here if it has none yet (a session connects only when
    // it is first asked something, so this never prompts for a login).
    virtual bool has_profile(const std::string& profile) = 0;
    // Deploys and sbatches `config` as run `run_id`; the session's worker writes the run's row.
    virtual int submit(const std::string& profile, const RunConfig& config, const std::string& run_id) = 0;
    // Slurm's word on these jobs, one question.
    virtual void ask(const std::string& profile, const std::vector<std::string>& jobs) = 0;
    virtual int cancel(const std::string& profile, const std::string& job) = 0;
    virtual int follow(const std::string& profile, const std::string& path, uint64_t offset) = 0;
    virtual void finish_follow(const std::string& profile, int follow_id) = 0;
    // Only on a session that is open already (never opens one to stop a follow).
    virtual void stop_follow(const std::string& profile, int follow_id) = 0;
};

// The queue a followed run's points are written to its row through: a write that fails is kept and tried
// again (history/history_writer.h).
class PointWriter {
public:
    virtual ~PointWriter() = default;
    // `rows` in log order and the log offset just after them.
    virtual void append(int64_t run_id, std::vector<MetricPointRow> rows, const RunMetrics& metrics,
                        uint64_t log_offset) = 0;
    // The run's log was rewritten: its stored points go before new ones are written.
    virtual void reset(int64_t run_id) = 0;
    // No longer followed: a last try to write what is queued.
    [[nodiscard]] virtual Status close_run(int64_t run_id) = 0;
};

// Runs a function later on the board's own thread (never after the board is gone).
class BoardTimer {
public:
    virtual ~BoardTimer() = default;
    virtual void later(int ms, std::function<void()> fn) = 0;
};

// What the board says to the user, worded where it is shown (the GUI translates it).
struct Notice {
    enum class Kind {
        kStarted,        // a local run started: name, command line
        kCancelling,     // name
        kEngineEnded,    // a local engine failed (an alert): its exit
        kSubmitting,     // name, profile
        kSubmitFailed,   // (an alert): why
        kSubmitted,      // job, profile, remote folder
        kScancelSent,    // job
        kScancelFailed,  // job, why
        kJobQuestion,    // a question about a job failed: job, why
        kJobRequeued,    // job, Slurm's word
        kJobEnded,       // (an alert): job, Slurm's word
    };
    Kind kind = Kind::kStarted;
    std::vector<std::string> args;
};

// Whoever is told what the board did (the GUI: signals). Each call comes after the change it names.
class RunEvents {
public:
    virtual ~RunEvents() = default;
    virtual void added(int key) = 0;
    virtual void changed(int key) = 0;  // state, detail, cancellable, job id, target, node states
    // A batch was folded into the run: `first_new` is, per metric, the index of its first new point.
    virtual void batch_folded(int key, const std::array<size_t, kMetricCount>& first_new) = 0;
    virtual void loaded(int key) = 0;  // an opened file was read to its end
    virtual void released(int key) = 0;
    virtual void alert(int key, const RunAlert& alert) = 0;
    virtual void local_finished(int key, int exit_code) = 0;
    // A cluster's connection went down or came back: once per change.
    virtual void connection(const std::string& profile, bool up, const std::string& why) = 0;
    virtual void notice(const Notice& notice) = 0;
    // The notice in the user's words (an alert carries its text).
    virtual std::string wording(const Notice& notice) = 0;
    virtual void store_problem(const std::string& why) = 0;
    // A run row was added, changed or removed, here or by another process.
    virtual void store_changed() = 0;
};

}  // namespace slipway::app
