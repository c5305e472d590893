// How the app starts slipway-engine on this computer: where the binary is and its exact command line.
// Everything that builds an engine command goes through engine_arguments(), so moving from one process
// (`train`) to N local ranks (`launch --nproc N -- train`) is the one switch kEngineHasLaunch.
#pragma once

#include <QString>
#include <QStringList>

namespace slipway::app {

// `slipway-engine launch --nproc N -- train ...` runs N local ranks (torchrun-like); false falls back to one
// `train` process (an engine from before launch existed).
inline constexpr bool kEngineHasLaunch = true;

// $SLIPWAY_ENGINE when set, else slipway-engine next to the running slipway binary (build/bin, /usr/bin),
// else the one on PATH, else "".
QString find_engine_binary();

// Arguments after the program: `launch --nproc N -- train --threads T RUN.json OVERRIDES...` once the
// engine has launch, `train --threads T RUN.json OVERRIDES...` before. T = cores / N (at least 1): on
// a small machine ranks that each use every core contend and run slower.
QStringList engine_arguments(const QString& run_json, int nproc, const QStringList& overrides = {},
                             int cores = 0);

// The folder holding resources/presets (the source tree when run from build/bin, /usr/share/slipway when
// installed), or "" when none is found. Relative paths in presets are relative to it.
QString resource_root();

}  // namespace slipway::app
