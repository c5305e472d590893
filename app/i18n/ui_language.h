// The interface language: which languages the app speaks, the user's choice (settings key "ui/language",
// applied at the next start), and installing the translators before the first widget is created.
#pragma once

#include <QList>
#include <QString>

class QCoreApplication;

namespace slipway::app {

struct UiLanguage {
    QString code;         // "en", "ru": the --lang value and the suffix of slipway_<code>.qm
    QString native_name;  // how the language calls itself ("Русский"), untranslated in menus
};

// English (the source language) first, then every other language with a slipway_<code>.qm under :/i18n.
const QList<UiLanguage>& ui_languages();
bool is_ui_language(const QString& code);

// The saved choice: a code from ui_languages(), or "" to follow the system locale.
QString saved_ui_language();
void save_ui_language(const QString& code);

// What this start speaks: `override_code` (--lang) when given, else the saved choice, else the system
// locale's language when the app has it, else English.
QString effective_ui_language(const QString& override_code = QString());

// Installs slipway_<code>.qm (for English: the plural forms of "%n nodes" and the like) and Qt's own
// qtbase_<code>.qm (standard dialogs' buttons) when present. Returns false when the app's own .qm could not
// be loaded.
bool install_translators(QCoreApplication& app, const QString& code);
// The language install_translators() installed last ("en" before any): for texts that are files rather
// than tr() strings, such as the presets' descriptions.
QString installed_ui_language();

}  // namespace slipway::app
