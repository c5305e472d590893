// HistoryWriter: the queue between live runs and the RunHistory. A run's points and the log offset just
// after them are queued and written in order, the queued points and the newest offset in one transaction,
// so the stored offset never passes a point that is not stored. When SQLite cannot write (disk full, the
// file locked by another program) everything stays queued and is tried again on the next batch once the
// retry delay has passed, and on a timer (the delay doubles up to a limit): no point is lost, repeated or
// reordered. It says once when writing starts failing (the file and SQLite's reason) and once when
// everything queued is stored again.
#pragma once

#include <QObject>
#include <QString>

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "contract/status.h"
#include "history/run_history.h"
#include "service/run_board_seams.h"

class QTimer;

namespace slipway::app {

class HistoryWriter : public QObject, public PointWriter {
    Q_OBJECT

public:
    struct RetryPolicy {
        int first_delay_ms = 1000;
        int max_delay_ms = 60'000;
        // How long one write waits for another connection's lock: writes run on the GUI thread, and a
        // failed one is tried again later anyway.
        int busy_timeout_ms = 200;
    };

    explicit HistoryWriter(RunHistory* history);
    // A last try; points that still cannot be written are reported with qWarning.
    ~HistoryWriter() override;

    void set_retry_policy(const RetryPolicy& policy) { policy_ = policy; }

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
    // While failing(): the file and SQLite's reason.
    const QString& problem() const { return problem_; }
    size_t pending_points() const;
    size_t pending_points(int64_t run_id) const;

signals:
    void write_failed(const QString& message);
    void write_recovered(const QString& message);

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

    RunHistory* history_;
    RetryPolicy policy_;
    std::map<int64_t, Queue> queues_;
    QTimer* retry_timer_;
    bool failing_ = false;
    QString problem_;
    int delay_ms_ = 0;
    int64_t next_try_ms_ = 0;  // while failing: appends before this only queue
};

}  // namespace slipway::app
