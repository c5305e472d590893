// HistoryWriter: per-run queues written through RunHistory::append, a retry on the timer seam with a
// doubling delay, and one Change per change between writing and failing.
#include "history/history_writer.h"

#include <algorithm>
#include <iostream>
#include <iterator>

namespace slipway::app {
HistoryWriter::HistoryWriter(RunHistory* history) : history_(history) {}

HistoryWriter::~HistoryWriter() {
    listener_ = nullptr;  // whoever listened may be half destroyed by now
    if (queues_.empty()) return;
    const size_t waiting = pending_points();
    if (const Status s = write_queues(); !s.ok()) {
        std::cerr << "slipway: " << waiting << " points were not stored in the run history "
                  << history_->path() << " (" << s.message()
                  << "); the stored log offsets are before them, so following those runs again reads them "
                     "again\n";
    }
}

void HistoryWriter::set_retry_timer(BoardTimer* timer) {
    retry_timer_ = timer;
    if (failing_) retry_later();  // a retry that waited on the old timer is now this one's
}

void HistoryWriter::retry_later() {
    stop_retrying();
    if (retry_timer_ == nullptr) return;
    retry_timer_->later(delay_ms_,
                        [this, alive = std::weak_ptr<bool>(alive_), generation = retry_generation_] {
                            if (alive.expired() || generation != retry_generation_) return;
                            (void)flush();
                        });
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
        stop_retrying();
        failing_ = false;
        problem_.clear();
    }
    const std::string run = std::to_string(run_id);
    if (reset_pending) {
        return Status::Error("the log of run " + run + " was rewritten, but the run history " +
                             history_->path() + " still holds its old points and offset (" + s.message() +
                             "); following it again reads the log from that stale offset (Delete the run's "
                             "history and follow it again to start over); " +
                             std::to_string(waiting) + " new points were not stored");
    }
    return Status::Error(std::to_string(waiting) + " points of run " + run +
                         " were not stored in the run history " + history_->path() + " (" + s.message() +
                         "); its stored log offset is before them, so following it again reads them again");
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
        stop_retrying();
        if (!failing_) return;
        failing_ = false;
        problem_.clear();
        tell(Change{false, history_->path(), {}, points_waiting});
        return;
    }
    problem_ = "cannot write the run history " + history_->path() + ": " + status.message();
    delay_ms_ = failing_ ? std::min(delay_ms_ * 2, policy_.max_delay_ms) : policy_.first_delay_ms;
    next_try_ms_ = now_ms() + delay_ms_;
    retry_later();
    if (failing_) return;
    failing_ = true;
    tell(Change{true, history_->path(), status.message(), points_waiting});
}

}  // namespace slipway::app
