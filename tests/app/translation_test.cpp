// The Russian interface: the main window built with the Russian translator speaks Russian (pages, menus,
// the monitor, run states, the editor's field labels), and resources/translations/slipway_ru.ts is
// complete (no unfinished or empty translation, every run config label, group and help present), as is
// slipway_en.ts (English plural forms).
#include <gtest/gtest.h>

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QTranslator>
#include <QXmlStreamReader>

#include <set>

#include "contract/run_config_schema.h"
#include "core/run_state.h"
#include "core/run_state_display.h"
#include "core/run_watch.h"
#include "editor/field_editor.h"
#include "editor/presets.h"
#include "i18n/ui_language.h"
#include "main_window.h"
#include "monitor/monitor_widget.h"
#include "remote/container/dockerfile_lint.h"
#include "test_paths.h"
#include "test_util.h"

namespace slipway::app {
namespace {

const QString kRussianTs = QString::fromUtf8(test_paths::source_dir("/resources/translations/slipway_ru.ts"));

// Installs the app's Russian translation for one test, and removes it after.
class RussianInterface : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(translator_.load(QStringLiteral("slipway_ru"), QStringLiteral(":/i18n")))
            << "slipway_ru.qm is not embedded under :/i18n";
        QCoreApplication::installTranslator(&translator_);
    }
    void TearDown() override { QCoreApplication::removeTranslator(&translator_); }

    testing_util::IsolatedHome home;
    QTranslator translator_;
};

QStringList menu_titles(const QMainWindow& window) {
    QStringList titles;
    for (const QAction* action : window.menuBar()->actions())
        titles << action->text().remove(QLatin1Char('&'));
    return titles;
}

QStringList page_names(const QMainWindow& window) {
    for (const QListWidget* list : window.findChildren<QListWidget*>()) {
        if (list->count() != 6) continue;
        QStringList names;
        for (int i = 0; i < list->count(); ++i)
            names << list->item(i)->text();
        return names;
    }
    return {};
}

QStringList label_texts(const QWidget* widget) {
    QStringList texts;
    for (const QLabel* label : widget->findChildren<QLabel*>())
        texts << label->text();
    return texts;
}

TEST(UiLanguage, EnglishAndRussianAreOffered) {
    ASSERT_GE(ui_languages().size(), 2);
    EXPECT_EQ(ui_languages().front().code, QStringLiteral("en"));
    EXPECT_TRUE(is_ui_language(QStringLiteral("ru")));
    EXPECT_FALSE(is_ui_language(QStringLiteral("xx")));
    EXPECT_EQ(effective_ui_language(QStringLiteral("ru")), QStringLiteral("ru"));
}

TEST(UiLanguage, SavedChoiceWinsOverTheSystemAndLangWinsOverBoth) {
    testing_util::IsolatedHome home;
    save_ui_language(QStringLiteral("ru"));
    EXPECT_EQ(saved_ui_language(), QStringLiteral("ru"));
    EXPECT_EQ(effective_ui_language(), QStringLiteral("ru"));
    EXPECT_EQ(effective_ui_language(QStringLiteral("en")), QStringLiteral("en"));
    save_ui_language(QString());  // System
    EXPECT_EQ(saved_ui_language(), QString());
}

TEST_F(RussianInterface, MainWindowSpeaksRussian) {
    MainWindow window(home.path() + QStringLiteral("/history.sqlite"));
    EXPECT_EQ(page_names(window),
              (QStringList{QStringLiteral("Запуски"), QStringLiteral("Редактор"), QStringLiteral("Монитор"),
                           QStringLiteral("Кластеры"), QStringLiteral("Чат"), QStringLiteral("Адаптация")}));
    EXPECT_EQ(menu_titles(window).value(0), QStringLiteral("Файл"));
    EXPECT_TRUE(menu_titles(window).contains(QStringLiteral("Вид")));
    EXPECT_TRUE(label_texts(window.monitor()).contains(QStringLiteral("Сглаживание:")))
        << label_texts(window.monitor()).join(QLatin1Char('|')).toStdString();
    EXPECT_EQ(display_text(RunState::kRunning), QStringLiteral("выполняется"));
    EXPECT_EQ(display_text(RunState::kCompleted), QStringLiteral("завершён"));
    // The details the run service stores in English are shown in Russian; Slurm's and the engine's as they
    // are.
    EXPECT_EQ(display_detail(QString::fromStdString(run_stop_detail("aborted"))),
              QStringLiteral("статус run_stop: aborted"));
    EXPECT_EQ(display_detail(QString::fromUtf8(kClosedWhileRunningDetail)),
              QStringLiteral("slipway закрыли, пока запуск шёл"));
    EXPECT_NE(display_detail(QString::fromUtf8(kOwnerEndedUnsaidDetail)),
              QString::fromUtf8(kOwnerEndedUnsaidDetail));
    EXPECT_EQ(display_detail(QStringLiteral("exit code 3: out of memory")),
              QStringLiteral("exit code 3: out of memory"));
    EXPECT_EQ(display_detail(QStringLiteral("run_stop status ")), QStringLiteral("run_stop status "));
    EXPECT_EQ(display_detail(QString::fromStdString(fill_text(kSlurmForgotDetail, {"success"}))),
              QStringLiteral("Slurm больше не знает задачу; run_stop в её журнале: success"));
    EXPECT_EQ(display_detail(QString::fromUtf8(kStepStoppedDetail)), QStringLiteral("остановлен"));
    EXPECT_EQ(display_detail(QString::fromUtf8(kProfileRemovedNotFollowedDetail)),
              QStringLiteral("профиль кластера удалён; запуск больше не отслеживается"));
    // RunWatch's alerts (the stall's is also a stored detail), with their arguments where they were.
    RunWatch watch(5.0, 1000);
    RunMetrics metrics;
    for (int step = 1; step <= 3; ++step) {
        MllogEvent event;
        event.key = "train_loss";
        event.value = 2.0;
        event.metadata = {{"step_num", step}, {"samples_count", step * 8}};
        metrics.add(event);
        (void)watch.on_event(event, metrics, step * 1000);
    }
    const std::optional<RunAlert> stall = watch.check_stall(9000);
    ASSERT_TRUE(stall.has_value());
    EXPECT_EQ(stall->message, "stalled: no new step for 6 s (median step interval 1000 ms)");
    EXPECT_EQ(display_detail(QString::fromStdString(stall->message)),
              QStringLiteral("завис: нет нового шага 6 с (медианный интервал шага 1000 мс)"));
    EXPECT_EQ(display_detail(QString::fromStdString(watch.on_exit(3)->message)),
              QStringLiteral("завершился с ошибкой: код выхода 3"));
    EXPECT_EQ(field_label(*find_field("/training/learning_rate")), QStringLiteral("Скорость обучения"));
    for (const remote::LintSeverity severity :
         {remote::LintSeverity::kError, remote::LintSeverity::kWarning, remote::LintSeverity::kInfo}) {
        const char* word = remote::lint_severity_name(severity);
        EXPECT_NE(QCoreApplication::translate("slipway::app::ContainerPanel", word), QLatin1String(word))
            << word;
    }
    EXPECT_EQ(field_help(*find_field("/training/learning_rate")),
              QStringLiteral("Пиковая скорость обучения AdamW."));
}

TEST(PresetDescriptions, InTheLanguageWhereTranslatedElseEnglish) {
    const QString root = QString::fromUtf8(test_paths::source_dir());
    const QDir presets(root + QStringLiteral("/resources/presets"));
    for (const Preset& p : list_presets(root, QStringLiteral("ru"))) {
        if (p.user) continue;
        // Every shipped preset has its Russian description.
        EXPECT_TRUE(presets.exists(p.name + QStringLiteral(".ru.md"))) << p.name.toStdString();
        EXPECT_FALSE(p.title.isEmpty()) << p.name.toStdString();
        if (p.name == QLatin1String("demo-tiny")) {
            EXPECT_TRUE(p.title.startsWith(QStringLiteral("Демо"))) << p.title.toStdString();
        }
    }
    for (const Preset& p : list_presets(root, QStringLiteral("en"))) {
        if (p.name == QLatin1String("demo-tiny")) {
            EXPECT_TRUE(p.title.startsWith(QStringLiteral("Demo"))) << p.title.toStdString();
        }
    }
}

// One <message> of a .ts file, as far as completeness goes.
struct TsMessage {
    QString context;
    QString source;
    bool finished = true;   // no type="unfinished"
    bool empty = false;     // a translation (or a plural form) with no text
    bool obsolete = false;  // type="obsolete" or "vanished": no longer in the sources
};

std::vector<TsMessage> read_ts(const QString& path) {
    QFile file(path);
    EXPECT_TRUE(file.open(QIODevice::ReadOnly)) << path.toStdString();
    std::vector<TsMessage> messages;
    QXmlStreamReader xml(&file);
    QString context;
    while (!xml.atEnd()) {
        if (xml.readNext() != QXmlStreamReader::StartElement) continue;
        const auto name = xml.name();
        if (name == QLatin1String("name")) {
            context = xml.readElementText();
        } else if (name == QLatin1String("message")) {
            messages.push_back({context, {}, true, false, false});
        } else if (name == QLatin1String("source") && !messages.empty()) {
            messages.back().source = xml.readElementText();
        } else if (name == QLatin1String("translation") && !messages.empty()) {
            TsMessage& m = messages.back();
            const QString type = xml.attributes().value(QLatin1String("type")).toString();
            m.finished = type != QLatin1String("unfinished");
            m.obsolete = type == QLatin1String("obsolete") || type == QLatin1String("vanished");
            // Plural messages hold one <numerusform> per form instead of text.
            QString text;
            bool has_forms = false;
            while (xml.readNext() != QXmlStreamReader::EndElement ||
                   xml.name() != QLatin1String("translation")) {
                if (xml.isStartElement() && xml.name() == QLatin1String("numerusform")) {
                    has_forms = true;
                    if (xml.readElementText().trimmed().isEmpty()) m.empty = true;
                } else if (xml.isCharacters()) {
                    text += xml.text();
                }
                if (xml.atEnd()) break;
            }
            if (!has_forms && text.trimmed().isEmpty()) m.empty = true;
        }
    }
    EXPECT_FALSE(xml.hasError()) << xml.errorString().toStdString() << " at line " << xml.lineNumber();
    return messages;
}

QStringList untranslated(const std::vector<TsMessage>& messages) {
    QStringList missing;
    for (const TsMessage& m : messages) {
        if (!m.obsolete && (!m.finished || m.empty)) missing << m.context + QStringLiteral(": ") + m.source;
    }
    return missing;
}

TEST(RussianTs, EveryShownStringIsTranslated) {
    const std::vector<TsMessage> messages = read_ts(kRussianTs);
    ASSERT_GT(messages.size(), 300u);
    const QStringList missing = untranslated(messages);
    EXPECT_TRUE(missing.isEmpty()) << missing.size() << " untranslated:\n"
                                   << missing.join(QLatin1Char('\n')).toStdString();
}

// slipway_en.ts: the English plural forms ("%n node(s)" -> "1 node", "8 nodes").
TEST(EnglishTs, EveryPluralHasItsForms) {
    const std::vector<TsMessage> messages =
        read_ts(QString::fromUtf8(test_paths::source_dir("/resources/translations/slipway_en.ts")));
    ASSERT_FALSE(messages.empty());
    const QStringList missing = untranslated(messages);
    EXPECT_TRUE(missing.isEmpty()) << missing.join(QLatin1Char('\n')).toStdString();
}

// A field added to run_config_schema.cpp reaches the .ts only through `--target slipway_lupdate`.
TEST(RussianTs, HasEveryRunConfigLabelGroupAndHelp) {
    std::set<QString> names;  // context "RunConfigField"
    std::set<QString> helps;  // context "RunConfigFieldHelp"
    for (const TsMessage& m : read_ts(kRussianTs)) {
        if (m.obsolete) continue;
        if (m.context == QLatin1String("RunConfigField")) names.insert(m.source);
        if (m.context == QLatin1String("RunConfigFieldHelp")) helps.insert(m.source);
    }
    for (const FieldSpec& spec : run_config_fields()) {
        for (const std::string& text : {spec.label, spec.group}) {
            if (!text.empty()) {
                EXPECT_EQ(names.count(QString::fromStdString(text)), 1u) << text;
            }
        }
        if (!spec.help.empty()) {
            EXPECT_EQ(helps.count(QString::fromStdString(spec.help)), 1u) << spec.help;
        }
    }
}

}  // namespace
}  // namespace slipway::app
