// FollowService: one worker thread, a poll timer on it, LogFollowers over local files keyed by follow id.
#include "core/follow_service.h"

#include <QFile>
#include <QTimer>

#include <map>
#include <memory>
#include <vector>

#include "remote/runlog/log_follower.h"

namespace slipway::app {
namespace {

// One followed file: the follower and the lines its last poll delivered.
struct Follow {
    std::vector<MllogStreamItem> items;
    std::unique_ptr<remote::LogFollower> follower;
};

}  // namespace

// Lives on the service's thread; every slot runs there.
class FollowWorker : public QObject {
    Q_OBJECT

public:
    explicit FollowWorker(int poll_ms) : poll_ms_(poll_ms) {}

public slots:
    void start_timer() {
        timer_ = new QTimer(this);
        timer_->setInterval(poll_ms_);
        connect(timer_, &QTimer::timeout, this, &FollowWorker::poll_all);
        timer_->start();
    }
    void add(int id, const QString& path, quint64 offset) {
        auto follow = std::make_unique<Follow>();
        Follow* raw = follow.get();
        remote::FollowerOptions options;
        options.chunk_bytes = FollowService::kPollBytes;
        options.max_bytes_per_poll = FollowService::kPollBytes;
        follow->follower = std::make_unique<remote::LogFollower>(
            std::make_unique<remote::LocalFileSource>(QFile::encodeName(path).toStdString()),
            [raw](MllogStreamItem&& item) { raw->items.push_back(std::move(item)); }, offset, options);
        followers_[id] = std::move(follow);
        poll_one(id, false);
    }
    void remove(int id) {
        followers_.erase(id);
        awaiting_.remove(id);
    }
    // The GUI took the last batch of `id`: read on at once if more was waiting, else at the next tick.
    void ack(int id, bool behind) {
        awaiting_.remove(id);
        if (behind) poll_one(id, false);
    }
    void finish(int id) {
        poll_one(id, true);
        followers_.erase(id);
    }

signals:
    void batch_ready(const std::shared_ptr<const slipway::app::FollowBatch>& batch);

private:
    void poll_all() {
        std::vector<int> ids;
        for (const auto& [id, follower] : followers_)
            ids.push_back(id);
        for (const int id : ids) {
            // One batch in flight per follow: a large file is read as fast as the GUI folds it in, never
            // faster, so memory stays bounded and the GUI's event loop runs between batches.
            if (!awaiting_.contains(id)) poll_one(id, false);
        }
    }

    bool poll_one(int id, bool finishing) {
        const auto it = followers_.find(id);
        if (it == followers_.end()) return false;
        Follow& follow = *it->second;
        auto shared = std::make_shared<FollowBatch>();
        FollowBatch& out = *shared;
        out.follow_id = id;
        out.finished = finishing;
        // Finishing reads to the end, a last unterminated line included.
        const Result<remote::PollResult> polled =
            finishing ? follow.follower->read_to_end() : follow.follower->poll();
        std::vector<MllogStreamItem> items = std::move(follow.items);
        follow.items.clear();
        if (!polled.ok()) {
            out.error = QString::fromStdString(polled.error());
            emit batch_ready(shared);
            return false;
        }
        out.reset = polled->restarted;
        out.missing = !polled->file_exists;
        out.offset = follow.follower->offset();
        out.behind = polled->behind;
        const size_t n = items.size();
        const size_t first_text =
            n > FollowService::kMaxLinesPerBatch ? n - FollowService::kMaxLinesPerBatch : 0;
        out.lines_skipped = static_cast<qint64>(first_text);
        for (size_t i = 0; i < n; ++i) {
            MllogStreamItem& item = items[i];
            if (i >= first_text) out.lines << QString::fromStdString(item.text);
            if (item.kind == MllogLineKind::kEvent) {
                out.events.push_back(std::move(item.event));
            } else if (item.kind == MllogLineKind::kBadMllog) {
                ++out.bad_lines;
            }
        }
        // Quiet polls of a live log send nothing.
        if (n > 0 || out.reset || finishing || (out.missing && !missing_reported_.contains(id))) {
            if (out.missing) missing_reported_.insert(id);
            if (!finishing) awaiting_.insert(id);
            emit batch_ready(shared);
        }
        return out.behind;
    }

    int poll_ms_;
    QTimer* timer_ = nullptr;
    std::map<int, std::unique_ptr<Follow>> followers_;
    QSet<int> missing_reported_;
    QSet<int> awaiting_;  // follows whose last batch the GUI has not taken yet
};

FollowService::FollowService(int poll_ms, QObject* parent)
    : QObject(parent), worker_(new FollowWorker(poll_ms)) {
    qRegisterMetaType<slipway::app::FollowBatch>();
    qRegisterMetaType<std::shared_ptr<const slipway::app::FollowBatch>>();
    worker_->moveToThread(&thread_);
    connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
    connect(worker_, &FollowWorker::batch_ready, this, &FollowService::deliver, Qt::QueuedConnection);
    thread_.setObjectName(QStringLiteral("slipway-follow"));
    thread_.start();
    QMetaObject::invokeMethod(worker_, "start_timer", Qt::QueuedConnection);
}

FollowService::~FollowService() {
    thread_.quit();
    thread_.wait();
}

int FollowService::follow(const QString& path, quint64 offset) {
    const int id = next_id_++;
    active_.insert(id);
    QMetaObject::invokeMethod(worker_, "add", Qt::QueuedConnection, Q_ARG(int, id), Q_ARG(QString, path),
                              Q_ARG(quint64, offset));
    return id;
}

void FollowService::finish(int follow_id) {
    if (!active_.contains(follow_id)) return;
    QMetaObject::invokeMethod(worker_, "finish", Qt::QueuedConnection, Q_ARG(int, follow_id));
}

void FollowService::stop(int follow_id) {
    active_.remove(follow_id);
    QMetaObject::invokeMethod(worker_, "remove", Qt::QueuedConnection, Q_ARG(int, follow_id));
}

void FollowService::deliver(const std::shared_ptr<const FollowBatch>& batch) {
    if (!active_.contains(batch->follow_id)) return;  // stopped: stale
    if (batch->finished) active_.remove(batch->follow_id);
    emit this->batch(*batch);
    if (!batch->finished) {
        QMetaObject::invokeMethod(worker_, "ack", Qt::QueuedConnection, Q_ARG(int, batch->follow_id),
                                  Q_ARG(bool, batch->behind));
    }
}

}  // namespace slipway::app

#include "follow_service.moc"
