// RunState's text at the edges: one table of states (DB word, display text, terminal or not) and one table
// of Slurm's job state words.
#include "core/run_state.h"

#include <algorithm>
#include <iterator>

#include "contract/mllog_keys.h"
#include "core/translatable.h"

namespace slipway::app {
namespace {

struct StateText {
    RunState state;
    const char* db_word;  // never translated: the runs.state column
    const char* display;  // the source text of the translation
    bool terminal;
};

// In enum order: kStateTexts[static_cast<size_t>(state)] describes `state`.
constexpr StateText kStateTexts[] = {
    {RunState::kSubmitting, "submitting", QT_TRANSLATE_NOOP("RunState", "submitting"), false},
    {RunState::kPending, "pending", QT_TRANSLATE_NOOP("RunState", "pending"), false},
    {RunState::kRunning, "running", QT_TRANSLATE_NOOP("RunState", "running"), false},
    {RunState::kStalled, "stalled", QT_TRANSLATE_NOOP("RunState", "stalled"), false},
    {RunState::kCompleted, "completed", QT_TRANSLATE_NOOP("RunState", "completed"), true},
    {RunState::kFailed, "failed", QT_TRANSLATE_NOOP("RunState", "failed"), true},
    {RunState::kCancelled, "cancelled", QT_TRANSLATE_NOOP("RunState", "cancelled"), true},
    {RunState::kTimeout, "timeout", QT_TRANSLATE_NOOP("RunState", "timed out"), true},
    {RunState::kIncomplete, "incomplete", QT_TRANSLATE_NOOP("RunState", "incomplete"), true},
    {RunState::kInterrupted, "interrupted", QT_TRANSLATE_NOOP("RunState", "interrupted"), true},
    {RunState::kUnknown, "unknown", QT_TRANSLATE_NOOP("RunState", "unknown"), true},
    {RunState::kReading, "reading", QT_TRANSLATE_NOOP("RunState", "reading"), false},
    {RunState::kFollowing, "following", QT_TRANSLATE_NOOP("RunState", "following"), false},
};
static_assert(std::size(kStateTexts) == std::size(kAllRunStates), "one row per RunState");

constexpr bool rows_in_enum_order() {
    for (size_t i = 0; i < std::size(kStateTexts); ++i)
        if (kStateTexts[i].state != kAllRunStates[i]) return false;
    return true;
}
static_assert(rows_in_enum_order(), "kStateTexts rows follow the enum's order");

const StateText& text_of(RunState state) {
    return kStateTexts[static_cast<size_t>(state)];
}

// Slurm's job state words (squeue / scontrol / sacct, Slurm 23) and what they mean for a run. The terminal
// ones are exactly remote::is_terminal_state's (run_state_test checks it).
struct SlurmWord {
    const char* word;
    RunState state;
};
constexpr SlurmWord kSlurmWords[] = {
    {"PENDING", RunState::kPending},     {"CONFIGURING", RunState::kPending},
    {"REQUEUED", RunState::kPending},    {"REQUEUE_HOLD", RunState::kPending},
    {"REQUEUE_FED", RunState::kPending}, {"RESV_DEL_HOLD", RunState::kPending},
    {"SUBMITTED", RunState::kPending},  // not Slurm's: a JSON run record before its first poll
    {"RUNNING", RunState::kRunning},     {"COMPLETING", RunState::kRunning},
    {"SIGNALING", RunState::kRunning},   {"STAGE_OUT", RunState::kRunning},
    {"RESIZING", RunState::kRunning},    {"SUSPENDED", RunState::kRunning},
    {"STOPPED", RunState::kRunning},     {"COMPLETED", RunState::kCompleted},
    {"FAILED", RunState::kFailed},       {"NODE_FAIL", RunState::kFailed},
    {"BOOT_FAIL", RunState::kFailed},    {"OUT_OF_MEMORY", RunState::kFailed},
    {"SPECIAL_EXIT", RunState::kFailed}, {"PREEMPTED", RunState::kFailed},
    {"CANCELLED", RunState::kCancelled}, {"REVOKED", RunState::kCancelled},
    {"TIMEOUT", RunState::kTimeout},     {"DEADLINE", RunState::kTimeout},
    {"UNKNOWN", RunState::kUnknown},
};

std::optional<RunState> known_slurm_word(std::string_view word) {
    const auto it = std::find_if(std::begin(kSlurmWords), std::end(kSlurmWords),
                                 [&](const SlurmWord& row) { return word == row.word; });
    if (it == std::end(kSlurmWords)) return std::nullopt;
    return it->state;
}

}  // namespace

std::string_view to_db_text(RunState state) {
    return text_of(state).db_word;
}

std::optional<RunState> from_db_text(std::string_view text) {
    for (const StateText& row : kStateTexts)
        if (text == row.db_word) return row.state;
    return std::nullopt;
}

RunState from_slurm(std::string_view normalized_state) {
    return known_slurm_word(normalized_state).value_or(RunState::kUnknown);
}

RunState from_slurm(std::string_view normalized_state, std::string_view log_status) {
    const RunState state = from_slurm(normalized_state);
    if (state == RunState::kUnknown && log_status == run_stop_status::kSuccess) return RunState::kCompleted;
    return state;
}

RunState from_run_stop(const RunMetrics& metrics) {
    if (!metrics.run_stop_ms) return RunState::kIncomplete;
    return from_run_stop_status(metrics.status.value_or(""));
}

RunState from_run_stop_status(std::string_view status) {
    if (status.empty()) return RunState::kUnknown;
    return status == run_stop_status::kSuccess ? RunState::kCompleted : RunState::kFailed;
}

namespace {

constexpr const char* kRunStopDetail = QT_TRANSLATE_NOOP("RunState", "run_stop status %1");

// A source text cut at its placeholders ("%1".."%9"): the literals around them (one more than there are
// placeholders) and each placeholder's number, in the order they stand.
struct Placeholders {
    std::vector<std::string_view> literals;
    std::vector<int> numbers;
};

Placeholders split_at_placeholders(std::string_view source) {
    Placeholders out;
    size_t from = 0;
    for (size_t at = source.find('%'); at != std::string_view::npos; at = source.find('%', at + 1)) {
        if (at + 1 >= source.size() || source[at + 1] < '1' || source[at + 1] > '9') continue;
        out.literals.push_back(source.substr(from, at - from));
        out.numbers.push_back(source[at + 1] - '0');
        from = at + 2;
        ++at;
    }
    out.literals.push_back(source.substr(from));
    return out;
}

// `text` as `source` filled in: its arguments by number (arguments[0] is %1's), or nullopt. Each argument
// is at least one character; the literal after one is looked for at its first place, the last one at the
// end.
std::optional<std::vector<std::string>> match(std::string_view source, std::string_view text) {
    const auto [literals, numbers] = split_at_placeholders(source);
    if (text.substr(0, literals[0].size()) != literals[0]) return std::nullopt;
    if (literals.size() == 1)
        return text.size() == literals[0].size() ? std::optional(std::vector<std::string>{}) : std::nullopt;
    std::vector<std::string> arguments;
    size_t pos = literals[0].size();
    for (size_t i = 1; i < literals.size(); ++i) {
        const std::string_view literal = literals[i];
        const bool last = i + 1 == literals.size();
        size_t end = std::string_view::npos;
        if (last) {
            if (text.size() >= pos + 1 + literal.size() &&
                text.substr(text.size() - literal.size()) == literal)
                end = text.size() - literal.size();
        } else if (pos + 1 <= text.size()) {
            end = text.find(literal, pos + 1);
        }
        if (end == std::string_view::npos || end <= pos) return std::nullopt;
        const size_t number = static_cast<size_t>(numbers[i - 1]);
        if (arguments.size() < number) arguments.resize(number);
        arguments[number - 1] = std::string(text.substr(pos, end - pos));
        pos = end + literal.size();
    }
    return arguments;
}

}  // namespace

const char* const kClosedWhileRunningDetail =
    QT_TRANSLATE_NOOP("RunState", "slipway was closed while it ran");
const char* const kOwnerEndedUnsaidDetail =
    QT_TRANSLATE_NOOP("RunState", "the process that ran it ended without saying how it ended");
const char* const kProfileChangedDuringSubmitDetail =
    QT_TRANSLATE_NOOP("RunState", "the cluster profile changed during submission; see the cluster");
const char* const kProfileRemovedDuringSubmitDetail =
    QT_TRANSLATE_NOOP("RunState", "cluster profile removed during submission");
const char* const kProfileRemovedNotFollowedDetail =
    QT_TRANSLATE_NOOP("RunState", "cluster profile removed; no longer followed");
const char* const kStoppedFromElsewhereDetail =
    QT_TRANSLATE_NOOP("RunState", "stopped by SIGTERM from another process");
const char* const kSubmissionInterruptedDetail = QT_TRANSLATE_NOOP("RunState", "submission interrupted");
const char* const kStepStoppedDetail = QT_TRANSLATE_NOOP("RunState", "stopped");
const char* const kSlurmForgotDetail =
    QT_TRANSLATE_NOOP("RunState", "Slurm no longer knows the job; its log's run_stop: %1");
const char* const kFinishedAlert = QT_TRANSLATE_NOOP("RunState", "finished (status success)");
const char* const kStoppedWithStatusAlert = QT_TRANSLATE_NOOP("RunState", "stopped with status %1");
const char* const kTargetReachedAlert =
    QT_TRANSLATE_NOOP("RunState", "reached its target: eval_accuracy %1 (target %2)");
const char* const kExitedCleanAlert = QT_TRANSLATE_NOOP("RunState", "finished (exit code 0)");
const char* const kExitedWithCodeAlert = QT_TRANSLATE_NOOP("RunState", "failed with exit code %1");
const char* const kStalledAlert =
    QT_TRANSLATE_NOOP("RunState", "stalled: no new step for %1 s (median step interval %2 ms)");

std::string fill_text(const char* source, std::initializer_list<std::string_view> arguments) {
    const auto [literals, numbers] = split_at_placeholders(source);
    std::string out(literals[0]);
    for (size_t i = 0; i < numbers.size(); ++i) {
        if (static_cast<size_t>(numbers[i]) <= arguments.size())
            out += *(arguments.begin() + (numbers[i] - 1));
        out += literals[i + 1];
    }
    return out;
}

std::string run_stop_detail(std::string_view status) {
    if (status.empty() || status == run_stop_status::kSuccess) return {};
    return fill_text(kRunStopDetail, {status});
}

std::optional<TextSource> text_source(std::string_view text) {
    for (const char* source :
         {kClosedWhileRunningDetail, kOwnerEndedUnsaidDetail, kProfileChangedDuringSubmitDetail,
          kProfileRemovedDuringSubmitDetail, kProfileRemovedNotFollowedDetail, kStoppedFromElsewhereDetail,
          kSubmissionInterruptedDetail, kStepStoppedDetail, kSlurmForgotDetail, kRunStopDetail,
          kFinishedAlert, kStoppedWithStatusAlert, kTargetReachedAlert, kExitedCleanAlert,
          kExitedWithCodeAlert, kStalledAlert}) {
        if (std::optional<std::vector<std::string>> arguments = match(source, text))
            return TextSource{source, std::move(*arguments)};
    }
    return std::nullopt;
}

LegacyState parse_legacy_text(std::string_view text) {
    if (text.empty()) return {};
    if (const std::optional<RunState> ours = from_db_text(text)) return {*ours, {}, {}};
    if (text == "opened") return {RunState::kReading, {}, {}};  // the monitor's word for a file being read
    if (text == "stopped") return {from_run_stop_status(""), {}, {}};
    // Slurm words are upper case; what else reached the column is a run_stop status, written verbatim.
    const bool upper_case =
        std::none_of(text.begin(), text.end(), [](char c) { return c >= 'a' && c <= 'z'; });
    if (!upper_case) return {from_run_stop_status(text), {}, std::string(text)};
    const bool ours = text == "SUBMITTED";
    return {from_slurm(text), ours ? std::string() : std::string(text), {}};
}

bool is_terminal(RunState state) {
    return text_of(state).terminal;
}

const char* display_source_text(RunState state) {
    return text_of(state).display;
}

}  // namespace slipway::app
