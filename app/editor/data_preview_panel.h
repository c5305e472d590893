// The run editor's data preview, under the Model & data page's fields: the first conversations (or texts)
// of the train file as the engine will train on them (data/data_preview.h): trained tokens highlighted,
// untrained ones grey, the token count of each span, then the counts over the lines read and the bad lines
// by number. Recomputed when a field it depends on changes (after a short pause in typing), so the user
// sees what the model learns from before spending cluster time.
#pragma once

#include <QGroupBox>
#include <QString>
#include <QTimer>

#include "contract/run_config.h"
#include "data/data_preview.h"

class QLabel;
class QTextBrowser;

namespace slipway::app {

class DataPreviewPanel : public QGroupBox {
    Q_OBJECT

public:
    // `resource_root` resolves the presets' relative paths, as a local run does.
    explicit DataPreviewPanel(const QString& resource_root, QWidget* parent = nullptr);

    // Schedules a new preview when what it reads changed; `now` computes it at once (loading a file).
    void show_config(const RunConfig& config, bool now = false);

    QLabel* summary() const { return summary_; }
    QTextBrowser* view() const { return view_; }
    // The last preview (empty documents until one succeeded).
    const data::DataPreview& preview() const { return preview_; }

private:
    void compute();
    QString summary_text(const data::DataPreview& p) const;
    static QString document_html(const data::PreviewDocument& d);

    QString resource_root_;
    RunConfig pending_;
    std::string shown_key_;
    QTimer debounce_;
    QLabel* summary_;
    QTextBrowser* view_;
    data::DataPreview preview_;
};

}  // namespace slipway::app
