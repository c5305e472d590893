// The interface language (see ui_language.h). The translations are compiled into the binary under :/i18n
// (app/CMakeLists.txt runs lrelease on resources/translations/slipway_<code>.ts).
#include "i18n/ui_language.h"

#include <QCoreApplication>
#include <QDir>
#include <QLibraryInfo>
#include <QLocale>
#include <QTranslator>
#include <algorithm>

#include "app_settings.h"
#include "settings_keys.h"

namespace slipway::app {
namespace {

const QString kSourceLanguage = QStringLiteral("en");
const QString kTranslationsDir = QStringLiteral(":/i18n");

QString& installed_language() {
    static QString code = kSourceLanguage;
    return code;
}

// "slipway_ru.qm" -> "ru".
QString code_of_qm(const QString& file_name) {
    return file_name.mid(QStringLiteral("slipway_").size()).chopped(QStringLiteral(".qm").size());
}

QString capitalized(const QString& name) {
    return name.isEmpty() ? name : name.left(1).toUpper() + name.mid(1);
}

}  // namespace

const QList<UiLanguage>& ui_languages() {
    static const QList<UiLanguage> languages = [] {
        QList<UiLanguage> found{{kSourceLanguage, QStringLiteral("English")}};
        const QStringList qm_files =
            QDir(kTranslationsDir).entryList({QStringLiteral("slipway_*.qm")}, QDir::Files, QDir::Name);
        for (const QString& file : qm_files) {
            const QString code = code_of_qm(file);
            if (code == kSourceLanguage) continue;  // slipway_en.qm: English plural forms only
            found.push_back({code, capitalized(QLocale(code).nativeLanguageName())});
        }
        return found;
    }();
    return languages;
}

bool is_ui_language(const QString& code) {
    const QList<UiLanguage>& languages = ui_languages();
    return std::any_of(languages.begin(), languages.end(),
                       [&](const UiLanguage& language) { return language.code == code; });
}

QString saved_ui_language() {
    const QString code = app_settings().value(settings_keys::kUiLanguage).toString();
    return is_ui_language(code) ? code : QString();
}

void save_ui_language(const QString& code) {
    app_settings().setValue(settings_keys::kUiLanguage, is_ui_language(code) ? code : QString());
}

QString effective_ui_language(const QString& override_code) {
    if (is_ui_language(override_code)) return override_code;
    if (const QString saved = saved_ui_language(); !saved.isEmpty()) return saved;
    // uiLanguages() lists the user's preferences, best first ("ru-RU", "ru", "en-US").
    for (const QString& preferred : QLocale::system().uiLanguages()) {
        const QString code = QLocale(preferred).name().section(QLatin1Char('_'), 0, 0);
        if (is_ui_language(code)) return code;
    }
    return kSourceLanguage;
}

bool install_translators(QCoreApplication& app, const QString& code) {
    auto* own = new QTranslator(&app);
    if (!own->load(QStringLiteral("slipway_") + code, kTranslationsDir)) {
        delete own;
        return false;
    }
    QCoreApplication::installTranslator(own);
    installed_language() = code;
    if (code == kSourceLanguage) return true;
    // Qt's standard dialogs and buttons (OK, Cancel, the file dialog), from the qt6-translations-l10n
    // package; the app still speaks the language without them.
    auto* qt_base = new QTranslator(&app);
    if (qt_base->load(QStringLiteral("qtbase_") + code, QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
        QCoreApplication::installTranslator(qt_base);
    else
        delete qt_base;
    return true;
}

QString installed_ui_language() {
    return installed_language();
}

}  // namespace slipway::app
