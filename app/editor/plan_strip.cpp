// PlanStrip (plan_strip.h): one line of verdict and time, the reason when it does not fit, the breakdown.
#include "editor/plan_strip.h"

#include <QFont>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QToolButton>
#include <QVBoxLayout>

namespace slipway::app {
namespace {

const char* const kFitsColor = "#2e7d32";
const char* const kDoesNotFitColor = "#c62828";

QString summary_html(const plan::Plan& p) {
    const QString verdict =
        p.fits ? QObject::tr("<b style=\"color:%1\">fits</b>, %2% to spare")
                     .arg(QLatin1String(kFitsColor))
                     .arg(qRound(100.0 * static_cast<double>(p.device_bytes - p.per_device_bytes) /
                                 static_cast<double>(std::max<int64_t>(1, p.device_bytes))))
               : QObject::tr("<b style=\"color:%1\">does not fit</b>").arg(QLatin1String(kDoesNotFitColor));
    const QString train_time =
        p.total_seconds
            ? QObject::tr("%1 to train (%2 steps)").arg(plan_duration_text(*p.total_seconds)).arg(*p.steps)
            : QObject::tr("time to train depends on the data (no max_steps)");
    QString html = QObject::tr(
                       "<b>Plan</b>: peak <b>%1</b> of %2 per device (%3) &middot; %4 per step "
                       "&middot; %5 &middot; %6 tokens per step")
                       .arg(plan_bytes_text(p.per_device_bytes), plan_bytes_text(p.device_bytes), verdict,
                            plan_duration_text(p.step_seconds), train_time,
                            human_count(static_cast<double>(p.tokens_per_step)));
    if (!p.fits) {
        html += QStringLiteral("<br><span style=\"color:%1\">%2</span>")
                    .arg(QLatin1String(kDoesNotFitColor), QString::fromStdString(p.reason).toHtmlEscaped());
    }
    return html;
}

}  // namespace

QString plan_bytes_text(int64_t bytes) {
    const double mib = static_cast<double>(bytes) / (1024.0 * 1024.0);
    if (mib < 1024.0) return QObject::tr("%1 MiB").arg(mib, 0, 'f', 1);
    return QObject::tr("%1 GiB").arg(mib / 1024.0, 0, 'f', 1);
}

QString human_count(double v) {
    if (v >= 1e9) return QObject::tr("%1 B", "billions").arg(v / 1e9, 0, 'f', 2);
    if (v >= 1e6) return QObject::tr("%1 M", "millions").arg(v / 1e6, 0, 'f', 2);
    if (v >= 1e3) return QObject::tr("%1 k", "thousands").arg(v / 1e3, 0, 'f', 1);
    return QString::number(v);
}

QString plan_duration_text(double seconds) {
    if (seconds < 60.0) return QObject::tr("%1 s").arg(seconds, 0, 'g', 3);
    if (seconds < 3600.0) return QObject::tr("%1 min").arg(seconds / 60.0, 0, 'f', 0);
    if (seconds < 2.0 * 86400.0) return QObject::tr("%1 h").arg(seconds / 3600.0, 0, 'f', 1);
    return QObject::tr("%1 days").arg(seconds / 86400.0, 0, 'f', 1);
}

PlanStrip::PlanStrip(QWidget* parent) : QFrame(parent) {
    setObjectName(QStringLiteral("plan_strip"));
    setFrameShape(QFrame::StyledPanel);
    summary_ = new QLabel(this);
    summary_->setTextFormat(Qt::RichText);
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    model_config_ = new QPushButton(tr("Choose a local config.json..."), this);
    model_config_->setToolTip(
        tr("The model folder is on the cluster: plan with a copy of its config.json from this computer "
           "(slipway-engine plan --model-config)"));
    details_button_ = new QToolButton(this);
    details_button_->setText(tr("Details"));
    details_button_->setCheckable(true);
    details_button_->setToolTip(tr("The planner's breakdown of the peak, and its assumptions"));
    details_ = new QLabel(this);
    details_->setTextFormat(Qt::PlainText);
    details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    details_->setWordWrap(true);  // the verdict's long line must not widen the window
    QFont mono(QStringLiteral("monospace"));
    mono.setStyleHint(QFont::Monospace);
    mono.setPointSize(9);
    details_->setFont(mono);
    details_->setVisible(false);
    connect(details_button_, &QToolButton::toggled, details_, &QLabel::setVisible);
    connect(model_config_, &QPushButton::clicked, this, &PlanStrip::model_config_requested);

    auto* row = new QHBoxLayout;
    row->addWidget(summary_, 1);
    row->addWidget(model_config_, 0, Qt::AlignTop);
    row->addWidget(details_button_, 0, Qt::AlignTop);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 4, 8, 4);
    layout->addLayout(row);
    layout->addWidget(details_);
}

void PlanStrip::show_plan(const RunPlanResult& result, const QString& picked_model_config) {
    // The button stays while a picked copy is in use, to change it.
    model_config_->setVisible(result.needs_model_config || !picked_model_config.isEmpty());
    model_config_->setText(picked_model_config.isEmpty() ? tr("Choose a local config.json...")
                                                         : tr("Another config.json..."));
    if (!result.plan) {
        summary_->setText(tr("<b>Plan</b>: %1").arg(QString::fromStdString(result.problem).toHtmlEscaped()));
        summary_->setToolTip(QString());
        details_->clear();
        details_button_->setEnabled(false);
        return;
    }
    summary_->setText(summary_html(*result.plan));
    QString breakdown = QString::fromStdString(plan::format_plan(*result.plan));
    breakdown += tr("\nModel config: %1").arg(QString::fromStdString(result.model_config));
    summary_->setToolTip(QStringLiteral("<pre>%1</pre>").arg(breakdown.toHtmlEscaped()));
    details_->setText(breakdown);
    details_button_->setEnabled(true);
}

}  // namespace slipway::app
