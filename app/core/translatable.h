// The marker lupdate finds translatable texts by, for files that build without Qt (the run service's):
// Qt's own QT_TRANSLATE_NOOP where Qt is included, else the text as it is.
#pragma once

#ifndef QT_TRANSLATE_NOOP
#define QT_TRANSLATE_NOOP(scope, text) text
#endif
