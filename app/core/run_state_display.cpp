// display_text: the state's source text (core/run_state.cpp's table) through Qt's translator.
#include "core/run_state_display.h"

#include <QCoreApplication>

namespace slipway::app {

QString display_text(RunState state) {
    return QCoreApplication::translate("RunState", display_source_text(state));
}

}  // namespace slipway::app
