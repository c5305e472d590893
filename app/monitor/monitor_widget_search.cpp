// MonitorWidget, the raw log's search: the view keeps only the last kMaxLogLines lines, so a search the
// shown lines cannot answer goes to the whole log file on a worker thread (search_log_file), and a hit
// replaces the view with the lines around it until the search is cleared or another run is shown.
#include <QCoreApplication>
#include <QFileInfo>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPointer>
#include <QScrollBar>
#include <QTextBlock>
#include <QThreadPool>

#include "monitor/monitor_widget.h"

namespace slipway::app {

bool MonitorWidget::find_in_log(const QString& text, bool backward) {
    if (text.isEmpty()) return false;
    const QTextDocument::FindFlags flags =
        backward ? QTextDocument::FindBackward : QTextDocument::FindFlags();
    if (log_view_->find(text, flags)) return true;
    const TrackedRun* r = run(current_);
    const MonitorView* v = view(current_);
    const bool partial = r != nullptr && v != nullptr &&
                         (v->lines_dropped > 0 || v->lines_not_sent > 0 || file_window_line_ >= 0);
    if (!partial || !QFileInfo(QString::fromStdString(r->log_path)).isFile()) {
        // Everything is shown (or there is no file to read): wrap around once.
        log_view_->moveCursor(backward ? QTextCursor::End : QTextCursor::Start);
        return log_view_->find(text, flags);
    }
    LogSearchRequest request;
    request.path = QString::fromStdString(r->log_path);
    request.text = text;
    request.backward = backward;
    request.from_line = file_window_line_;  // on from the last hit; from the file's start (or end) at first
    const int search_id = ++log_search_id_;
    log_search_pending_ = true;
    search_result_->setText(tr("searching the whole log..."));
    QThreadPool::globalInstance()->start(
        [guard = QPointer<MonitorWidget>(this), request, search_id, key = current_] {
            Result<LogSearchHit> hit = search_log_file(request);
            // The application object outlives the widget: the answer goes to the widget only if it still
            // exists.
            QMetaObject::invokeMethod(
                QCoreApplication::instance(),
                [guard, search_id, key, text = request.text, hit = std::move(hit)] {
                    if (guard) guard->show_log_search_hit(search_id, key, text, hit);
                },
                Qt::QueuedConnection);
        });
    return false;
}

void MonitorWidget::show_log_search_hit(int search_id, int key, const QString& text,
                                        const Result<LogSearchHit>& hit) {
    if (search_id != log_search_id_) return;  // a newer search is on its way
    log_search_pending_ = false;
    if (key != current_ || !hit.ok() || !hit->found) {
        search_result_->setText(hit.ok() ? tr("not found") : QString::fromStdString(hit.error()));
        emit log_search_finished(false);
        return;
    }
    const int64_t first = hit->first_line + 1;  // numbered from 1 for people
    QStringList shown;
    shown << tr("[slipway] lines %1-%2 of the log file (clear the search to see its end)")
                 .arg(first)
                 .arg(first + hit->window.size() - 1);
    shown << hit->window;
    log_view_->setPlainText(shown.join(QLatin1Char('\n')));
    file_window_line_ = hit->line;
    // The hit's line is the header's next line plus its place in the window; select the text there.
    const QTextBlock block = log_view_->document()->findBlockByNumber(1 + int(hit->line - hit->first_line));
    QTextCursor cursor(block);
    log_view_->setTextCursor(cursor);
    log_view_->find(text);
    log_view_->centerCursor();
    log_view_->horizontalScrollBar()->setValue(0);
    search_result_->setText(tr("line %1").arg(hit->line + 1));
    emit log_search_finished(true);
}

}  // namespace slipway::app
