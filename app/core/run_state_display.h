// A run state as the pages show it: translated (the "RunState" context of the .ts files). Apart from
// core/run_state.h so that the run service and the CLI stay free of Qt.
#pragma once

#include <QString>

#include "core/run_state.h"

namespace slipway::app {

QString display_text(RunState state);
// A state's detail or an alert as the pages show it: one the Qt-free code wrote (text_source) translated,
// any other (Slurm's reason, the engine's last words) as it is.
QString display_detail(const QString& detail);

}  // namespace slipway::app
