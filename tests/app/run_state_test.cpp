// Tests of RunState's text edges: the DB words round-trip, Slurm's words agree with remote's terminal rule,
// texts in existing databases and JSON records map to the state they meant, run_stop gives the end state,
// and only display_text is translated.
#include "core/run_state.h"
#include "core/run_state_display.h"

#include <gtest/gtest.h>

#include <QCoreApplication>
#include <QTranslator>
#include <algorithm>
#include <set>
#include <string>

#include "remote/slurm/slurm_parsers.h"

namespace slipway::app {
namespace {

TEST(RunState, DbWordsRoundTripAndAreDistinctLowerCase) {
    std::set<std::string_view> words;
    for (RunState state : kAllRunStates) {
        const std::string_view word = to_db_text(state);
        EXPECT_FALSE(word.empty());
        EXPECT_TRUE(std::none_of(word.begin(), word.end(), [](char c) { return c < 'a' || c > 'z'; }))
            << word;
        EXPECT_TRUE(words.insert(word).second) << word << " is written for two states";
        EXPECT_EQ(from_db_text(word), state) << word;
    }
    for (std::string_view not_ours : {"", "RUNNING", "Running", "running ", "PENDING", "stopped", "aborted"})
        EXPECT_EQ(from_db_text(not_ours), std::nullopt) << not_ours;
}

TEST(RunState, TerminalAndLiveSplitEveryState) {
    const std::set<RunState> terminal = {RunState::kCompleted, RunState::kFailed,     RunState::kCancelled,
                                         RunState::kTimeout,   RunState::kIncomplete, RunState::kInterrupted,
                                         RunState::kUnknown};
    for (RunState state : kAllRunStates) {
        EXPECT_EQ(is_terminal(state), terminal.count(state) == 1) << to_db_text(state);
        EXPECT_NE(is_terminal(state), is_live(state)) << to_db_text(state);
        EXPECT_EQ(is_success(state), state == RunState::kCompleted) << to_db_text(state);
    }
}

// Every job state word Slurm documents (squeue/sacct "JOB STATE CODES").
const char* const kSlurmStateWords[] = {
    "BOOT_FAIL",     "CANCELLED",    "COMPLETED",     "CONFIGURING", "COMPLETING", "DEADLINE",
    "FAILED",        "NODE_FAIL",    "OUT_OF_MEMORY", "PENDING",     "PREEMPTED",  "RUNNING",
    "RESV_DEL_HOLD", "REQUEUE_FED",  "REQUEUE_HOLD",  "REQUEUED",    "RESIZING",   "REVOKED",
    "SIGNALING",     "SPECIAL_EXIT", "STAGE_OUT",     "STOPPED",     "SUSPENDED",  "TIMEOUT"};

TEST(RunState, SlurmWordsAgreeWithRemoteTerminalRule) {
    for (const char* word : kSlurmStateWords) {
        const RunState state = from_slurm(word);
        EXPECT_NE(state, RunState::kUnknown) << word << " is a Slurm word we should know";
        EXPECT_EQ(is_terminal(state), remote::is_terminal_state(word)) << word;
        EXPECT_EQ(is_success(state), remote::is_success_state(word)) << word;
    }
}

TEST(RunState, SlurmWordsMapToTheirMeaning) {
    const struct {
        const char* raw;  // as squeue / scontrol / sacct print it, before normalize_job_state
        RunState state;
    } kCases[] = {
        {"PENDING", RunState::kPending},
        {"CONFIGURING", RunState::kPending},
        {"REQUEUED", RunState::kPending},
        {"RUNNING", RunState::kRunning},
        {"COMPLETING", RunState::kRunning},
        {"SUSPENDED", RunState::kRunning},
        {"COMPLETED", RunState::kCompleted},
        {"FAILED", RunState::kFailed},
        {"NODE_FAIL", RunState::kFailed},
        {"OUT_OF_MEMORY", RunState::kFailed},
        {"PREEMPTED", RunState::kFailed},
        {"CANCELLED by 1000", RunState::kCancelled},
        {"cancelled+", RunState::kCancelled},
        {"REVOKED", RunState::kCancelled},
        {"TIMEOUT", RunState::kTimeout},
        {"DEADLINE", RunState::kTimeout},
        {"", RunState::kUnknown},
        {"UNKNOWN", RunState::kUnknown},
        {"SOME_NEW_STATE", RunState::kUnknown},
    };
    for (const auto& c : kCases)
        EXPECT_EQ(from_slurm(remote::normalize_job_state(c.raw)), c.state) << '"' << c.raw << '"';
}

TEST(RunState, LegacyTextsMapToWhatTheyMeant) {
    const struct {
        const char* text;
        RunState state;
    } kCases[] = {
        // Our own words, unchanged by schema 2.
        {"submitting", RunState::kSubmitting},
        {"running", RunState::kRunning},
        {"completed", RunState::kCompleted},
        {"failed", RunState::kFailed},
        {"cancelled", RunState::kCancelled},
        {"incomplete", RunState::kIncomplete},
        {"interrupted", RunState::kInterrupted},
        {"reading", RunState::kReading},
        {"following", RunState::kFollowing},
        {"opened", RunState::kReading},
        // The app's "PENDING", JSON records' "SUBMITTED", and Slurm's words stored verbatim.
        {"PENDING", RunState::kPending},
        {"SUBMITTED", RunState::kPending},
        {"RUNNING", RunState::kRunning},
        {"COMPLETED", RunState::kCompleted},
        {"NODE_FAIL", RunState::kFailed},
        {"CANCELLED", RunState::kCancelled},
        {"TIMEOUT", RunState::kTimeout},
        {"SOME_NEW_STATE", RunState::kUnknown},
        // run_stop without a status, and a run_stop status written verbatim (MLPerf's "aborted").
        {"stopped", RunState::kUnknown},
        {"aborted", RunState::kFailed},
        {"", RunState::kUnknown},
    };
    for (const auto& c : kCases)
        EXPECT_EQ(from_legacy_text(c.text), c.state) << '"' << c.text << '"';
    for (RunState state : kAllRunStates)
        EXPECT_EQ(from_legacy_text(to_db_text(state)), state);
}

TEST(RunState, AJobSlurmForgotTakesItsLogsRunStopOnlyWhenItSaysSuccess) {
    EXPECT_EQ(from_slurm("UNKNOWN", "success"), RunState::kCompleted);
    EXPECT_EQ(from_slurm("UNKNOWN", "aborted"), RunState::kUnknown);  // Slurm's end is not known: no guess
    EXPECT_EQ(from_slurm("UNKNOWN", ""), RunState::kUnknown);
    EXPECT_EQ(from_slurm("FAILED", "success"), RunState::kFailed);  // Slurm's own word wins when it has one
    EXPECT_EQ(from_slurm("RUNNING", "success"), RunState::kRunning);
}

TEST(RunState, FromRunStop) {
    RunMetrics m;
    EXPECT_EQ(from_run_stop(m), RunState::kIncomplete);
    MllogEvent stop;
    stop.key = "run_stop";
    stop.time_ms = 5000;
    m.add(stop);
    EXPECT_EQ(from_run_stop(m), RunState::kUnknown);
    stop.metadata = {{"status", "aborted"}};
    m.add(stop);
    EXPECT_EQ(from_run_stop(m), RunState::kFailed);
    stop.metadata = {{"status", "success"}};
    m.add(stop);
    EXPECT_EQ(from_run_stop(m), RunState::kCompleted);
}

// Answers every RunState text with a marked copy, and nothing in any other context.
class MarkingTranslator : public QTranslator {
public:
    bool isEmpty() const override { return false; }
    QString translate(const char* context, const char* source, const char*, int) const override {
        if (QString::fromLatin1(context) != QLatin1String("RunState")) return {};
        return QStringLiteral("<%1>").arg(QString::fromLatin1(source));
    }
};

TEST(RunState, OnlyDisplayTextIsTranslated) {
    EXPECT_EQ(display_text(RunState::kTimeout), QStringLiteral("timed out"));
    MarkingTranslator translator;
    ASSERT_TRUE(QCoreApplication::installTranslator(&translator));
    for (RunState state : kAllRunStates) {
        const QString shown = display_text(state);
        EXPECT_TRUE(shown.startsWith('<') && shown.endsWith('>')) << shown.toStdString();
        EXPECT_EQ(from_db_text(to_db_text(state)), state);  // the DB words stay the same
    }
    EXPECT_EQ(display_text(RunState::kRunning), QStringLiteral("<running>"));
    QCoreApplication::removeTranslator(&translator);
    EXPECT_EQ(display_text(RunState::kRunning), QStringLiteral("running"));
}

// The texts the Qt-free code writes in English are found again with their arguments, so the pages can
// translate them; any other text is nobody's.
TEST(RunStateTexts, FilledTextsAreFoundWithTheirArguments) {
    EXPECT_EQ(fill_text(kStalledAlert, {"6", "1000"}),
              "stalled: no new step for 6 s (median step interval 1000 ms)");
    EXPECT_EQ(fill_text(kStalledAlert, {"6"}), "stalled: no new step for 6 s (median step interval  ms)");
    EXPECT_EQ(run_stop_detail("aborted"), "run_stop status aborted");

    const std::optional<TextSource> stall = text_source(fill_text(kStalledAlert, {"6", "1000"}));
    ASSERT_TRUE(stall.has_value());
    EXPECT_STREQ(stall->source, kStalledAlert);
    EXPECT_EQ(stall->arguments, (std::vector<std::string>{"6", "1000"}));
    const std::optional<TextSource> stop = text_source("run_stop status aborted");
    ASSERT_TRUE(stop.has_value());
    EXPECT_EQ(stop->arguments, std::vector<std::string>{"aborted"});
    const std::optional<TextSource> fixed = text_source(kStepStoppedDetail);
    ASSERT_TRUE(fixed.has_value());
    EXPECT_TRUE(fixed->arguments.empty());
    // An argument with spaces and parentheses of its own: the last literal is found at the end.
    const std::optional<TextSource> odd = text_source("stopped with status out (of) memory");
    ASSERT_TRUE(odd.has_value());
    EXPECT_EQ(odd->arguments, std::vector<std::string>{"out (of) memory"});

    EXPECT_FALSE(text_source("run_stop status "));  // an argument is never empty
    EXPECT_FALSE(text_source("stopped early"));     // a text without arguments matches whole
    EXPECT_FALSE(text_source("exit code 3: out of memory"));
    EXPECT_FALSE(text_source(""));
    EXPECT_FALSE(text_source("stalled: no new step for 6 s"));  // cut short
}

}  // namespace
}  // namespace slipway::app
