// Fuzz harness: the remote log follower over a fake session whose file grows in chunks the input decides
// (including a last line that never ends). Lines must come out as the whole file read at once gives
// them, and what the follower holds back for an unfinished line must stay bounded.
#include <string>
#include <vector>

#include "contract/mllog_stream.h"
#include "fuzz_common.h"
#include "remote/runlog/log_follower.h"
#include "remote/ssh/fake_session.h"

using namespace slipway;
using namespace slipway::remote;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2) return 0;
    const size_t chunk = 1 + data[0] % 61;  // bytes appended per poll
    const std::string_view text = fuzz::as_text(data + 1, size - 1);
    constexpr size_t kMaxLine = 128;

    std::vector<std::string> followed, whole;
    FakeSession session;
    session.put_file("/r/slurm-1.out", "");
    FollowerOptions options;
    options.chunk_bytes = 1 + data[1] % 23;
    options.max_line_bytes = kMaxLine;
    LogFollower follower(
        std::make_unique<SessionFileSource>(session, "/r/slurm-1.out"),
        [&followed](MllogStreamItem&& item) { followed.push_back(item.text); }, 0, options);
    for (size_t at = 0; at < text.size(); at += chunk) {
        session.append_file("/r/slurm-1.out", std::string(text.substr(at, chunk)));
        Result<PollResult> poll = follower.poll();
        FUZZ_CHECK(poll.ok(), poll.error());
        FUZZ_CHECK(follower.held_bytes() <= kMaxLine + options.chunk_bytes,
                   std::to_string(follower.held_bytes()));
    }
    while (true) {  // catch up: a poll reads at most max_bytes_per_poll
        Result<PollResult> poll = follower.poll();
        FUZZ_CHECK(poll.ok(), poll.error());
        if (poll->bytes_read == 0) break;
    }
    follower.finish();

    MllogStream stream([&whole](MllogStreamItem&& item) { whole.push_back(item.text); }, kMaxLine);
    stream.feed(text);
    stream.finish();
    FUZZ_CHECK(followed == whole, "the follower's lines differ from the file's");
    return 0;
}
