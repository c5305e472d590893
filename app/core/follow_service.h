// Log following off the GUI thread: a worker thread polls every followed file (LogFollower), parses the
// new lines and sends them back as FollowBatch values by queued signal. Each follow has an id; batches of
// a follow that was stopped are dropped, so a stale result never reaches a view.
#pragma once

#include <QMetaType>
#include <QObject>
#include <QSet>
#include <QString>
#include <QStringList>
#include <QThread>

#include <memory>
#include <vector>

#include "contract/mllog.h"

namespace slipway::app {

struct FollowBatch {
    int follow_id = 0;
    bool reset = false;     // the file was rewritten: drop what came before
    bool missing = false;   // the file does not exist yet
    bool finished = false;  // the last batch of a finish() request
    bool behind = false;    // more bytes are waiting (a large file being read in pieces)
    QString error;
    std::vector<MllogEvent> events;  // the MLLOG events, in order
    QStringList lines;               // the text of the last lines (at most kMaxLinesPerBatch)
    qint64 lines_skipped = 0;        // lines before `lines` not sent (a big batch)
    qint64 bad_lines = 0;
    quint64 offset = 0;  // bytes consumed through the last complete line
};

class FollowWorker;

class FollowService : public QObject {
    Q_OBJECT

public:
    static constexpr int kMaxLinesPerBatch = 5000;
    // Bytes read per poll: a large file arrives as many small batches, so the GUI thread folds each one
    // in a few milliseconds and stays responsive while a 100 MB log streams in.
    static constexpr size_t kPollBytes = size_t{1} << 20;

    explicit FollowService(int poll_ms = 300, QObject* parent = nullptr);
    ~FollowService() override;

    // Starts following `path` from byte `offset`; returns the follow id used in batches.
    int follow(const QString& path, quint64 offset = 0);
    // Reads what is left, a last unterminated line included, sends it as a finished batch, and stops.
    void finish(int follow_id);
    // Stops at once; batches already on their way are dropped.
    void stop(int follow_id);
    bool active(int follow_id) const { return active_.contains(follow_id); }

signals:
    void batch(const slipway::app::FollowBatch& batch);

private:
    void deliver(const std::shared_ptr<const slipway::app::FollowBatch>& batch);

    QThread thread_;
    FollowWorker* worker_;
    QSet<int> active_;
    int next_id_ = 1;
};

}  // namespace slipway::app

Q_DECLARE_METATYPE(slipway::app::FollowBatch)
// Batches cross from the worker thread by pointer: a queued signal would otherwise deep-copy every event.
Q_DECLARE_METATYPE(std::shared_ptr<const slipway::app::FollowBatch>)
