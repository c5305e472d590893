#!/bin/sh
# A stand-in for `slipway-engine generate --prompts - --stream` in the chat client's tests (the real engine
# is driven by the gui test). It appends its arguments, then each request line, to $FAKE_GENERATOR_LOG, and
# answers each request with two {"delta"} lines and the final line, as the engine does. FAKE_GENERATOR_MODE
# makes the faults: "die" writes one delta then exits 3 (a crash mid-reply); "malformed" writes a line that
# is not JSON before each reply; "error" answers the first request with {"error"}; "no_template" fails
# --chat as a model without a chat template does (exit 78) (and answers plain text requests); "slow" writes one
# delta, then waits (a long reply to stop), and writes one more delta when stopped.
log=${FAKE_GENERATOR_LOG:-/dev/null}
echo "args: $*" >>"$log"
case " $* " in
*" --chat "*) chat=1 ;;
*) chat=0 ;;
esac
if [ "${FAKE_GENERATOR_MODE:-}" = no_template ] && [ "$chat" = 1 ]; then
    echo "/models/tiny: no chat template (neither tokenizer_config.json's chat_template nor chat_template.jinja); --chat needs one" >&2
    exit 78  # chat::kExitNoChatTemplate
fi
echo "fake generator: model loaded" >&2
n=0
while IFS= read -r line; do
    n=$((n + 1))
    echo "request: $line" >>"$log"
    case "${FAKE_GENERATOR_MODE:-}" in
    die)
        echo '{"delta": "Half"}'
        echo "fake generator: killed mid-reply" >&2
        exit 3 ;;
    malformed) echo 'Segmentation fault? {not json' ;;
    slow)
        # Stopped (SIGTERM), it still writes a line on its way out, as a generator mid-token may.
        trap 'echo "{\"delta\": \"late\"}"; exit 143' TERM
        echo '{"delta": "Partial"}'
        sleep 10 &
        wait $!
        continue ;;
    error)
        if [ "$n" = 1 ]; then
            echo '{"error": "stdin:1: messages[0]: needs a string \"role\""}'
            continue
        fi ;;
    esac
    echo "{\"delta\": \"Reply \"}"
    echo "{\"delta\": \"$n\"}"
    echo "{\"ids\": [1, 2], \"text\": \"Reply $n.\", \"finish_reason\": \"eos\", \"prompt_tokens\": 7, \"new_tokens\": 2, \"tokens_per_s\": 12.5}"
done
