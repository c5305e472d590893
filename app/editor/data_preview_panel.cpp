// DataPreviewPanel (data_preview_panel.h): resolves the config's input paths, runs the preview and draws
// it as HTML.
#include "editor/data_preview_panel.h"

#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QLocale>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace slipway::app {
namespace {

constexpr int kShown = 3;
constexpr int kRead = 200;

// Relative paths as a local run reads them: under the resource root.
void resolve(std::string& path, const QString& root) {
    if (path.empty() || QDir::isAbsolutePath(QString::fromStdString(path)) || root.isEmpty()) return;
    path = QDir::cleanPath(QDir(root).absoluteFilePath(QString::fromStdString(path))).toStdString();
}

// Everything the preview reads, with the files' times: equal keys, equal previews.
std::string key_of(const RunConfig& c) {
    std::string key;
    for (const std::string* s :
         {&c.model.path, &c.tokenizer.path, &c.data.train_file, &c.data.text_field, &c.data.format,
          &c.data.train_on, &c.data.chat_template, &c.data.truncation, &c.data.split}) {
        key += *s + '\n';
        const QFileInfo info(QString::fromStdString(*s));
        if (info.exists()) key += std::to_string(info.lastModified().toMSecsSinceEpoch()) + '\n';
    }
    return key + std::to_string(c.data.block_size);
}

QString escaped(const std::string& text) {
    return QString::fromStdString(text).toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("↵<br>"));
}

}  // namespace

DataPreviewPanel::DataPreviewPanel(const QString& resource_root, QWidget* parent)
    : QGroupBox(tr("What the model learns from"), parent), resource_root_(resource_root) {
    auto* layout = new QVBoxLayout(this);
    summary_ = new QLabel(this);
    summary_->setWordWrap(true);
    summary_->setTextFormat(Qt::RichText);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    view_ = new QTextBrowser(this);
    view_->setMinimumHeight(220);
    view_->setOpenLinks(false);
    layout->addWidget(summary_);
    layout->addWidget(view_);
    debounce_.setSingleShot(true);
    debounce_.setInterval(400);
    connect(&debounce_, &QTimer::timeout, this, &DataPreviewPanel::compute);
}

void DataPreviewPanel::show_config(const RunConfig& config, bool now) {
    pending_ = config;
    for (std::string* path : {&pending_.model.path, &pending_.tokenizer.path, &pending_.data.train_file,
                              &pending_.data.chat_template})
        resolve(*path, resource_root_);
    if (key_of(pending_) == shown_key_) return;
    if (now) {
        compute();
    } else {
        debounce_.start();
    }
}

void DataPreviewPanel::compute() {
    shown_key_ = key_of(pending_);
    if (pending_.data.train_file.empty()) {
        summary_->setText(tr("Set the training data to see what the model learns from."));
        view_->clear();
        return;
    }
#ifdef SLIPWAY_WITH_DATA_PREVIEW
    const Result<data::DataPreview> p = data::preview_data(pending_, kShown, kRead);
#else
    const Result<data::DataPreview> p =
        Status::Error("this build of Slipway has no engine (its data library)");
#endif
    if (!p.ok()) {
        summary_->setText(QStringLiteral("<span style='color:#b00020'>%1</span>")
                              .arg(QString::fromStdString(p.error()).toHtmlEscaped()));
        view_->clear();
        return;
    }
    preview_ = *p;
    summary_->setText(summary_text(preview_));
    QString html;
    for (const data::PreviewDocument& d : preview_.documents)
        html += document_html(d);
    if (!preview_.bad_lines.empty()) {
        html += QStringLiteral("<p><b>%1</b></p><ul>").arg(tr("Bad lines"));
        for (const std::string& line : preview_.bad_lines)
            html += QStringLiteral("<li style='color:#b00020'>%1</li>")
                        .arg(QString::fromStdString(line).toHtmlEscaped());
        html += QStringLiteral("</ul>");
    }
    view_->setHtml(html);
}

QString DataPreviewPanel::summary_text(const data::DataPreview& p) const {
    const QLocale locale;
    const double share =
        p.tokens ? 100.0 * static_cast<double>(p.trained) / static_cast<double>(p.tokens) : 0.0;
    QString format = QString::fromStdString(p.format);
    if (!p.format_found.empty())
        format += QStringLiteral(" (%1)").arg(QString::fromStdString(p.format_found));
    const QString read = p.whole_file ? tr("all %n line(s) of the file", "", static_cast<int>(p.lines_read))
                                      : tr("the first %n line(s)", "", static_cast<int>(p.lines_read));
    return tr("<b>%1</b> &middot; %2: %3 kept, %4 tokens, %5% trained &middot; %6 cut to the sequence "
              "length, "
              "%7 dropped &middot; <span style='%8'>%9 bad line(s)</span><br>"
              "<span style='background:#c8f0d0'>&nbsp;trained&nbsp;</span> "
              "<span style='color:#888'>not trained</span>, the number of tokens after each part")
        .arg(format.toHtmlEscaped(), read, locale.toString(static_cast<qulonglong>(p.kept)),
             locale.toString(static_cast<qulonglong>(p.tokens)), locale.toString(share, 'f', 1),
             locale.toString(static_cast<qulonglong>(p.truncated)),
             locale.toString(static_cast<qulonglong>(p.dropped)),
             p.bad_lines.empty() ? QStringLiteral("") : QStringLiteral("color:#b00020"),
             locale.toString(static_cast<qulonglong>(p.bad_lines.size())));
}

QString DataPreviewPanel::document_html(const data::PreviewDocument& d) {
    QString html = QStringLiteral("<p style='margin-top:8px'><b>%1</b></p><p style='font-family:monospace'>")
                       .arg(tr("Line %1: %2 tokens, %3 trained%4")
                                .arg(d.line)
                                .arg(d.tokens)
                                .arg(d.trained)
                                .arg(d.truncated ? tr(", cut to the sequence length") : QString()));
    for (const data::PreviewSpan& s : d.spans) {
        const QString style = s.trained ? QStringLiteral("background:#c8f0d0") : QStringLiteral("color:#888");
        // The count goes where the part ends, before the line breaks it ends with.
        const size_t body =
            s.text.find_last_not_of('\n') == std::string::npos ? 0 : s.text.find_last_not_of('\n') + 1;
        html += QStringLiteral("<span style='%1'>%2</span><sub style='color:#1565c0'>&thinsp;%3</sub>")
                    .arg(style, escaped(s.text.substr(0, body)))
                    .arg(s.tokens);
        if (body < s.text.size())
            html += QStringLiteral("<span style='%1'>%2</span>").arg(style, escaped(s.text.substr(body)));
    }
    return html + QStringLiteral("</p>");
}

}  // namespace slipway::app
