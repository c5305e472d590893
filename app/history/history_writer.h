// HistoryWriter: the queue between live runs and the RunHistory. A run's points and the log offset just
// after them are queued and written in order, the queued points and the newest offset in one transaction,
// so the stored offset never passes a point that is not stored. When SQLite cannot write (disk full, the
// file locked by another program) everything stays queued and is tried again on the next batch once the
// retry delay has passed, and on a timer (the delay doubles up to a limit): no point is lost, repeated or
// reordered. It says once when writing starts failing (the file and SQLite's reason) and once when
// everything queued is stored again. Qt-free: the timer it retries on and who listens are seams.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "contract/status.h"
#include "history/run_history.h"
#include "service/run_board_seams.h"

namespace slipway::app {

class HistoryWriter : public PointWriter {
public:
    struct RetryPolicy {
        int first_delay_ms = 1000;
        int max_delay_ms = 60'000;
        // How long one write waits for another connection's lock: writes run on the GUI thread, and a
        // failed one is tried again later anyway.
        int busy_timeout_ms = 200;
    };

    // Writing started failing, or works again: said once per change (the GUI words it for the user).
    struct Change {
        bool failing = false;
        std::string path;           // the history's file
        std::string reason;         // while failing: SQLite's reason ("database or disk is full")
        size_t points_waiting = 0;  // works again: the queued points that are now stored
    };

    explicit HistoryWriter(RunHistory* history);
    // A last try; points that still cannot be written are reported on stderr.
    ~HistoryWriter() override;
    HistoryWriter(const HistoryWriter&) = delete;
    HistoryWriter& operator=(const HistoryWriter&) = delete;

    void set_retry_policy(const RetryPolicy& policy) { policy_ = policy; }
    // Where retries wait while failing (the GUI's event loop; not owned: set nullptr before it goes).
    // Without one a failed write is tried again on the next append or flush.
    void set_retry_timer(BoardTimer* timer);
    void set_listener(std::function<void(const Change&)> listener) { listener_ = std::move(listener); }

    // Queues `rows` (in log order) and the offset just after them, and writes the queues unless the
    // history is failing and the retry delay has not passed yet.
    void append(int64_t run_id, std::vector<MetricPointRow> rows, const RunMetrics& metrics,
                uint64_t log_offset) override;
    // The run's log was rewritten: what is queued for it is dropped and its stored points are deleted
    // before any new ones are written.
    void reset(int64_t run_id) override;
    // The run is no longer followed: a last try to write its queue. When that fails the queue is dropped
    // (its points were never stored and the stored offset is before them, so following the run again
    // reads them again) and the error says how many points and why.
    [[nodiscard]] Status close_run(int64_t run_id) override;
    // Writes every queue now, whatever the retry delay.
    [[nodiscard]] Status flush();
    // Forgets what is queued for the run (it was removed from the history, or its points reset there).
    void discard(int64_t run_id);

    bool failing() const { return failing_; }
    // While failing(): "cannot write the run history <file>: <SQLite's reason>".
    const std::string& problem() const { return problem_; }
    size_t pending_points() const;
    size_t pending_points(int64_t run_id) const;

private:
    // What is waiting for one run.
    struct Queue {
        bool reset = false;  // its stored points are deleted first
        std::vector<MetricPointRow> rows;
        std::optional<uint64_t> offset;  // the offset after `rows`: set once something was appended
        RunFacts facts;                  // the newest
    };

    // Writes the queues in run order, stopping at the first failure (the file is then unwritable for all).
    Status write_queues();
    Status write_queue(int64_t run_id, Queue& queue);
    // Failing or recovered after a write, and the retry timer.
    void after_write(const Status& status, size_t points_waiting);
    void retry_later();
    void stop_retrying() { ++retry_generation_; }  // a retry already waiting on the timer does nothing
    void tell(const Change& change) const {
        if (listener_) listener_(change);
    }

    RunHistory* history_;
    RetryPolicy policy_;
    std::map<int64_t, Queue> queues_;
    BoardTimer* retry_timer_ = nullptr;
    uint64_t retry_generation_ = 0;
    std::shared_ptr<bool> alive_ =
        std::make_shared<bool>(true);  // a retry after the writer went does nothing
    std::function<void(const Change&)> listener_;
    bool failing_ = false;
    std::string problem_;
    int delay_ms_ = 0;
    int64_t next_try_ms_ = 0;  // while failing: appends before this only queue
};

}  // namespace slipway::app
