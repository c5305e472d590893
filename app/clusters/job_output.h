// What a long cluster job (the doctor, an engine build) says in its page: the lines it streams, in a
// read-only log under the page's inputs, and its result, green or red, above them. Hidden until a job starts.
#pragma once

#include <QStringList>
#include <QWidget>

class QLabel;
class QPlainTextEdit;

namespace slipway::app {

class JobOutput : public QWidget {
    Q_OBJECT

public:
    // `max_lines`: the log keeps its last lines (a build's errors are at its end); `height`: its most pixels.
    JobOutput(int max_lines, int height, QWidget* parent = nullptr);

    void start();  // a job begins: the log cleared and shown, the last result hidden
    void clear();  // another cluster shown: nothing of the last job
    void append(const QStringList& lines);
    void show_result(bool ok, const QString& message);

    QLabel* result_label() const { return result_; }
    QPlainTextEdit* log_view() const { return log_; }

private:
    QLabel* result_;
    QPlainTextEdit* log_;
};

}  // namespace slipway::app
