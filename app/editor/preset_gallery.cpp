// PresetGallery: cards in a QListWidget, sized to their wrapped text.
#include "editor/preset_gallery.h"

#include <QEvent>
#include <QFile>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QScrollBar>
#include <QVBoxLayout>

#include "contract/run_config.h"

namespace slipway::app {

PresetGallery::PresetGallery(QWidget* parent) : QWidget(parent) {
    list_ = new QListWidget(this);
    list_->setObjectName(QStringLiteral("preset_gallery"));
    list_->setSelectionMode(QAbstractItemView::SingleSelection);
    list_->setVerticalScrollMode(QAbstractItemView::ScrollPerPixel);
    list_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    list_->setSpacing(2);
    // A light selection, so the card's own colours stay readable on it.
    list_->setStyleSheet(QStringLiteral("QListWidget::item:selected { background: #dbe8f5; }"));
    list_->viewport()->installEventFilter(this);  // cards follow the viewport's width
    use_ = new QPushButton(tr("Use this preset"), this);
    use_->setEnabled(false);
    auto* buttons = new QHBoxLayout;
    buttons->addStretch(1);
    buttons->addWidget(use_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(list_, 1);
    layout->addLayout(buttons);

    auto choose = [this](QListWidgetItem* item) {
        if (item != nullptr) emit preset_chosen(item->data(Qt::UserRole).toString());
    };
    connect(list_, &QListWidget::itemActivated, this, choose);
    connect(use_, &QPushButton::clicked, this, [this, choose] { choose(list_->currentItem()); });
    connect(list_, &QListWidget::currentItemChanged, this,
            [this](QListWidgetItem* item) { use_->setEnabled(item != nullptr); });
}

void PresetGallery::set_presets(const QList<Preset>& presets, const QStringList& names) {
    list_->clear();
    for (int i = 0; i < presets.size() && i < names.size(); ++i) {
        const Preset& p = presets[i];
        const Result<RunConfig> config = load_run_config(QFile::encodeName(p.path).toStdString());
        const QString title = p.title.isEmpty() ? names[i] : p.title;
        // A preset without its own description (the user's) says what its config's comment says.
        QString description = p.description;
        if (description.isEmpty() && config.ok()) description = QString::fromStdString(config->comment);
        const QString figures = config.ok()
                                    ? preset_figures(*config)
                                    : tr("Cannot be read: %1").arg(QString::fromStdString(config.error()));
        auto* card = new QLabel;
        card->setTextFormat(Qt::RichText);
        card->setWordWrap(true);
        card->setMargin(8);
        card->setText(QStringLiteral("<b>%1</b> <span style='color:#757575'>%2</span><br>%3<br>"
                                     "<span style='color:#2e5c8a'>%4</span>")
                          .arg(title.toHtmlEscaped(), names[i].toHtmlEscaped(), description.toHtmlEscaped(),
                               figures.toHtmlEscaped()));
        auto* item = new QListWidgetItem(list_);
        item->setData(Qt::UserRole, names[i]);
        item->setToolTip(p.path);
        list_->setItemWidget(item, card);
    }
    fit_cards();
}

bool PresetGallery::select(const QString& name) {
    for (int i = 0; i < list_->count(); ++i) {
        if (list_->item(i)->data(Qt::UserRole).toString() == name) {
            list_->setCurrentRow(i);
            return true;
        }
    }
    return false;
}

bool PresetGallery::eventFilter(QObject* watched, QEvent* event) {
    if (watched == list_->viewport() && event->type() == QEvent::Resize) fit_cards();
    return QWidget::eventFilter(watched, event);
}

void PresetGallery::fit_cards() {
    const int width = list_->viewport()->width() - 2 * list_->spacing();
    for (int i = 0; i < list_->count(); ++i) {
        QListWidgetItem* item = list_->item(i);
        QWidget* card = list_->itemWidget(item);
        if (card == nullptr) continue;
        item->setSizeHint(QSize(width, card->heightForWidth(width)));
    }
}

}  // namespace slipway::app
