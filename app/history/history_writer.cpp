// HistoryWriter: per-run queues written through RunHistory::append, a single-shot retry timer with a
// doubling delay, and one message per change between writing and failing.
#include "history/history_writer.h"

#include <QSignalBlocker>
#include <QTimer>
#include <QtDebug>

#include <algorithm>
#include <iterator>

namespace slipway::app {
HistoryWriter::HistoryWriter(RunHistory* history) : history_(history), retry_timer_(new QTimer(this)) {
    retry_timer_->setSingleShot(true);
    connect(retry_timer_, &QTimer::timeout, this, [this] { (void)flush(); });
}

HistoryWriter::~HistoryWriter() {
    if (queues_.empty()) return;
    const QSignalBlocker quiet(this);  // whoever listened may be half destroyed by now
    const size_t waiting = pending_points();
    if (const Status s = write_queues(); !s.ok()) {
        qWarning().noquote() << QStringLiteral(
                                    "slipway: %1 points were not stored in the run history %2 (%3); the "
                                    "stored log offsets are before them, so following those runs again "
                                    "reads them again")
                                    .arg(waiting)
                                    .arg(history_->path(), QString::fromStdString(s.message()));
    }
}

void HistoryWriter::append(int64_t run_id, std::vector<MetricPointRow> rows, const RunMetrics& metrics,
                           uint64_t log_offset) {
    Queue& queue = queues_[run_id];
    queue.rows.insert(queue.rows.end(), std::make_move_iterator(rows.begin()),
                      std::make_move_iterator(rows.end()));
    queue.offset = log_offset;
    queue.facts = RunFacts::of(metrics);
    if (!failing_ || now_ms() >= next_try_ms_) (void)flush();
}

void HistoryWriter::reset(int64_t run_id) {
    Queue& queue = queues_[run_id];
    queue = Queue();
    queue.reset = true;
    if (!failing_ || now_ms() >= next_try_ms_) (void)flush();
}

Status HistoryWriter::flush() {
    const size_t waiting = pending_points();
    const Status s = write_queues();
    after_write(s, waiting);
    return s;
}

Status HistoryWriter::close_run(int64_t run_id) {
    const auto it = queues_.find(run_id);
    if (it == queues_.end()) return Status::Ok();
    const size_t waiting = it->second.rows.size();
    const bool reset_pending = it->second.reset;
    (void)history_->set_busy_timeout(policy_.busy_timeout_ms);
    const Status s = write_queue(run_id, it->second);
    (void)history_->set_busy_timeout(RunHistory::kBusyTimeoutMs);
    queues_.erase(it);
    if (s.ok()) {
        if (queues_.empty()) after_write(s, waiting);
        return s;
    }
    if (queues_.empty()) {  // nothing left to retry: no "written again" later about nothing
        retry_timer_->stop();
        failing_ = false;
        problem_.clear();
    }
    const QString what =
        reset_pending
            ? QStringLiteral(
                  "the log of run %2 was rewritten, but the run history %3 still holds its old points "
                  "and offset (%4); following it again reads the log from that stale offset (Delete the "
                  "run's history and follow it again to start over); %1 new points were not stored")
            : QStringLiteral(
                  "%1 points of run %2 were not stored in the run history %3 (%4); its stored log "
                  "offset is before them, so following it again reads them again");
    return Status::Error(what.arg(waiting)
                             .arg(run_id)
                             .arg(history_->path(), QString::fromStdString(s.message()))
                             .toStdString());
}

void HistoryWriter::discard(int64_t run_id) {
    queues_.erase(run_id);
}

size_t HistoryWriter::pending_points() const {
    size_t n = 0;
    for (const auto& [run_id, queue] : queues_)
        n += queue.rows.size();
    return n;
}

size_t HistoryWriter::pending_points(int64_t run_id) const {
    const auto it = queues_.find(run_id);
    return it == queues_.end() ? 0 : it->second.rows.size();
}

Status HistoryWriter::write_queues() {
    if (queues_.empty()) return Status::Ok();
    (void)history_->set_busy_timeout(policy_.busy_timeout_ms);
    Status result = Status::Ok();
    for (auto it = queues_.begin(); it != queues_.end();) {
        result = write_queue(it->first, it->second);
        if (!result.ok()) break;
        it = queues_.erase(it);
    }
    (void)history_->set_busy_timeout(RunHistory::kBusyTimeoutMs);
    return result;
}

Status HistoryWriter::write_queue(int64_t run_id, Queue& queue) {
    if (queue.reset) {
        if (Status s = history_->reset_stored_points(run_id); !s.ok()) return s;
        queue.reset = false;  // done: a failed append after it must not delete again
    }
    if (queue.offset) {
        // All or nothing: on failure the transaction is rolled back and the queue stays as it was.
        if (Status s = history_->append(run_id, queue.rows, queue.facts, *queue.offset); !s.ok()) return s;
        queue.rows.clear();
        queue.offset.reset();
    }
    return Status::Ok();
}

void HistoryWriter::after_write(const Status& status, size_t points_waiting) {
    if (status.ok()) {
        retry_timer_->stop();
        if (!failing_) return;
        failing_ = false;
        problem_.clear();
        emit write_recovered(points_waiting == 0
                                 ? tr("the run history %1 is written again").arg(history_->path())
                                 : tr("the run history %1 is written again; the %2 points that "
                                      "waited are stored")
                                       .arg(history_->path())
                                       .arg(points_waiting));
        return;
    }
    problem_ = tr("cannot write the run history %1: %2")
                   .arg(history_->path(), QString::fromStdString(status.message()));
    delay_ms_ = failing_ ? std::min(delay_ms_ * 2, policy_.max_delay_ms) : policy_.first_delay_ms;
    next_try_ms_ = now_ms() + delay_ms_;
    retry_timer_->start(delay_ms_);
    if (failing_) return;
    failing_ = true;
    emit write_failed(problem_ + QStringLiteral(". Points are kept and written when it works again."));
}

}  // namespace slipway::app
