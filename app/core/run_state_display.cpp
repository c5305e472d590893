// display_text and display_detail: the source texts of core/run_state.cpp through Qt's translator.
#include "core/run_state_display.h"

#include <QCoreApplication>
#include <QStringList>

namespace slipway::app {

QString display_text(RunState state) {
    return QCoreApplication::translate("RunState", display_source_text(state));
}

QString display_detail(const QString& detail) {
    if (detail.isEmpty()) return detail;
    const std::optional<TextSource> source = text_source(detail.toStdString());
    if (!source) return detail;
    const QString text = QCoreApplication::translate("RunState", source->source);
    QStringList args;
    for (const std::string& argument : source->arguments)
        args << QString::fromStdString(argument);
    // All at once, so an argument that holds "%2" itself stays as it is (the core's texts have two at most).
    switch (args.size()) {
        case 0:
            return text;
        case 1:
            return text.arg(args[0]);
        case 2:
            return text.arg(args[0], args[1]);
        default:
            return text.arg(args[0], args[1], args[2]);
    }
}

}  // namespace slipway::app
