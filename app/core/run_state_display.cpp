// display_text and display_detail: the source texts of core/run_state.cpp through Qt's translator.
#include "core/run_state_display.h"

#include <QCoreApplication>

namespace slipway::app {

QString display_text(RunState state) {
    return QCoreApplication::translate("RunState", display_source_text(state));
}

QString display_detail(const QString& detail) {
    const std::optional<DetailSource> source = service_detail_source(detail.toStdString());
    if (!source) return detail;
    const QString text = QCoreApplication::translate("RunState", source->source);
    return source->argument.empty() ? text : text.arg(QString::fromStdString(source->argument));
}

}  // namespace slipway::app
