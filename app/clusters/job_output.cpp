// JobOutput (see job_output.h).
#include "clusters/job_output.h"

#include <QLabel>
#include <QPlainTextEdit>
#include <QVBoxLayout>

namespace slipway::app {

JobOutput::JobOutput(int max_lines, int height, QWidget* parent) : QWidget(parent) {
    result_ = new QLabel(this);
    result_->setWordWrap(true);
    result_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    result_->hide();
    log_ = new QPlainTextEdit(this);
    log_->setReadOnly(true);
    log_->setMaximumBlockCount(max_lines);
    log_->setMaximumHeight(height);
    log_->hide();
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(result_);
    layout->addWidget(log_);
}

void JobOutput::start() {
    log_->clear();
    log_->show();
    result_->hide();
}

void JobOutput::clear() {
    log_->clear();
    log_->hide();
    result_->hide();
}

void JobOutput::append(const QStringList& lines) {
    for (const QString& line : lines)
        log_->appendPlainText(line);
}

void JobOutput::show_result(bool ok, const QString& message) {
    result_->setStyleSheet(ok ? QStringLiteral("color:#2e7d32") : QStringLiteral("color:#c62828"));
    result_->setText(message);
    result_->show();
}

}  // namespace slipway::app
