#!/usr/bin/env python3
r"""Writes the tokenizer test corpus, tests/data/tokenizer/corpus.jsonl: one {"text": "..."} per line.
Deterministic (seeded PRNG, no clock, no locale, no network): every run gives the same file byte for byte. All
prose here was composed for this repository; no text is copied from elsewhere (see tests/data/tokenizer/README.md).

  python3 tests/reference/make_corpus.py [--out PATH] [--seed N]

Output format (for the C++ reader): UTF-8, one JSON object per line, "\n" line ends. JSON escapes are \" \\ \b
\f \n \r \t and \u00XX for other C0 controls; in addition U+007F..U+009F, U+00AD, U+2028, U+2029 and U+FEFF are
written as \uXXXX so that no line holds a character that some readers treat as a line break or strip. Everything
else (astral characters included) is raw UTF-8, so there are no surrogate-pair escapes.

The bytes do not depend on the Python version: the PRNG is 32-bit integer arithmetic, and only characters
assigned long ago are case-mapped or normalized (the Unicode stability policy freezes their mappings).
"""
import argparse
import json
import os
import re
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MASK = 0xFFFFFFFF


# ---------------------------------------------------------------- PRNG ----
class Rng:
    """mulberry32: 32-bit state, integer-only arithmetic, so identical everywhere."""

    def __init__(self, seed):
        self.s = seed & MASK

    def u32(self):
        self.s = (self.s + 0x6D2B79F5) & MASK
        t = self.s
        t = ((t ^ (t >> 15)) * (t | 1)) & MASK
        t ^= (t + ((t ^ (t >> 7)) * (t | 61))) & MASK
        return (t ^ (t >> 14)) & MASK

    def int(self, n):  # [0, n)
        return self.u32() % n

    def range(self, lo, hi):  # [lo, hi]
        return lo + self.int(hi - lo + 1)

    def chance(self, num, den=100):
        return self.int(den) < num

    def pick(self, items):
        return items[self.int(len(items))]

    def shuffle(self, items):
        for i in range(len(items) - 1, 0, -1):
            j = self.int(i + 1)
            items[i], items[j] = items[j], items[i]
        return items

    def digits(self, n, no_leading_zero=False):
        return "".join(str(1 + self.int(9) if i == 0 and no_leading_zero else self.int(10)) for i in range(n))


def cap(s):
    return s[:1].upper() + s[1:]


T = "\t"

# ----------------------------------------------------------- English ------
EN_SENTENCES = [
    'The quick brown fox jumps over the lazy dog.',
    'She sells sea shells by the sea shore, or so the old rhyme claims.',
    'Nobody expected the build to pass on the first try, least of all the person who wrote it.',
    'On Tuesday morning the river had risen almost two meters above its usual level.',
    'Is it really necessary to rewrite the whole parser just to support one more flag?',
    'He left the keys on the kitchen table, next to a cold cup of coffee and an unopened letter.',
    'The museum closes at 5:30 p.m. on weekdays and at noon on Sundays.',
    'Wait — did you just say the tests were green yesterday?',
    'A tokenizer turns text into numbers; a decoder turns the numbers back into text.',
    'Three hundred and sixty-five days later, the garden looked completely different.',
    'The committee approved the proposal by a narrow margin of 7 to 6.',
    'Please do not feed the ducks bread; it is bad for them.',
    'Her grandmother kept every recipe in a worn notebook with a green cover.',
    'If the cache is cold, the first request takes about 1.8 seconds.',
    'Winter arrived early that year, and the harbor froze before December.',
    'The instructions said "turn left at the bakery," but there was no bakery anymore.',
    'They argued for hours about tabs versus spaces and agreed on nothing.',
    'Every lighthouse on this coast has its own pattern of flashes.',
    'I told him twice: the meeting is on the 14th, not the 4th!',
    'After the storm, the streets smelled of wet asphalt and cut grass.',
    'The library\'s oldest book is a hand-copied atlas from the sixteenth century.',
    'Why would anyone schedule a deployment at 4:59 on a Friday afternoon?',
    'The recipe calls for 250 g of flour, 2 eggs and a pinch of salt.',
    'A small boat drifted past the pier, its sail folded and its engine silent.',
    'Latency went down by 37% after we removed the extra copy.',
    'The cat, as usual, ignored everyone and slept on the warmest laptop.',
    'We measured the hallway twice and still ordered a carpet that was too short.',
    'Mr. Smith, Dr. Jones and Prof. O\'Brien arrived at 9 a.m. sharp.',
    'Some words, like "queue" and "rhythm", are simply hard to spell.',
    'The station was empty except for a pigeon and a vending machine that hummed.',
    'Children ran across the square chasing soap bubbles the size of footballs.',
    'Our hotel room overlooked a parking lot, not the ocean as advertised.',
    'It took the volunteers eleven days to clear the trail after the landslide.',
    'By midnight the server had processed 1,048,576 requests without a single error.',
    'The violinist paused, retuned the E string, and began the movement again.',
    'Somewhere in the attic there is a box of letters nobody has ever read.',
    'The hikers reached the summit just as the fog lifted over the valley.',
    'A well-placed comment can save a future reader an entire afternoon.',
    'Grandfather insisted that the radio worked better if you tapped it twice.',
    'The bakery on the corner sells bread until it runs out, usually by ten.',
    'It was the kind of silence that makes you notice the ticking of a clock.',
    'The report is due on 2025-03-31; late submissions will not be accepted.',
    'She answered every question in French, although the exam was in English.',
    'When the lights went out, the whole orchestra kept playing from memory.',
    'There are exactly 86,400 seconds in a day, leap seconds aside.',
    'The fox, the crow and the cheese: an old fable with a modern moral.',
    'He wrote "TODO: fix later" in 2009, and later never came.',
    'The tide tables for next week are pinned to the door of the harbor office.',
    'Could you pass the salt — no, the other salt, the coarse one?',
    'The first snow melted before anyone could build a snowman.',
]

EN_SUBJ = ['the engineer', 'a tired student', 'my neighbor', 'the old librarian', 'our team',
    'the new intern', 'a stray dog', 'the mayor', 'the compiler', 'the orchestra', 'a young painter',
    'the night guard', 'the weather service', 'her brother', 'the robot', 'the ship\'s captain',
    'a retired pilot', 'the whole village', 'the bakery owner', 'a curious child']
EN_VERB = ['found', 'fixed', 'ignored', 'painted', 'rewrote', 'discovered', 'carried',
    'borrowed', 'measured', 'translated', 'tested', 'forgot', 'opened', 'repaired', 'described',
    'returned', 'counted', 'sold', 'photographed', 'explained']
EN_OBJ = ['the broken lamp', 'a very long letter', 'three wooden chairs', 'the quarterly report',
    'an unfinished novel', 'the last train ticket', 'a map of the northern coast', 'the build script',
    'a jar of honey', 'the missing semicolon', 'forty-two postcards', 'the rusty bicycle',
    'a strange signal', 'the grandmother\'s recipe', 'the old telescope', 'a box of vinyl records',
    'the config file', 'two kilograms of apples', 'the theory of everything', 'a cracked mirror']
EN_ADV = ['yesterday evening', 'at dawn', 'in a small town by the river', 'after a long meeting',
    'despite the rain', 'almost without mistakes', 'at exactly 7:45', 'in about 3.5 hours',
    'on Monday', 'under the noise of the wind', 'with great difficulty', 'completely by accident',
    'before breakfast', 'in the middle of the night', 'for the third time this week',
    'while everyone was asleep', 'on the top floor', 'in less than a minute']
EN_TAIL = ['because time was running out', 'although nobody had asked', 'and that surprised everyone',
    'but the result was unexpected', 'so that it would be ready by midnight', 'which nobody noticed',
    'and then went home', 'as if it were the most natural thing in the world']


def en_sentence(r):
    s, v, o, a = r.pick(EN_SUBJ), r.pick(EN_VERB), r.pick(EN_OBJ), r.pick(EN_ADV)
    k = r.int(7)
    if k == 0:
        return f"{cap(a)}, {s} {v} {o}."
    if k == 1:
        return f"{cap(s)} {v} {o} {a}, {r.pick(EN_TAIL)}."
    if k == 2:
        return f"Why has {s} {'forgotten' if v == 'forgot' else v} {o}?"
    if k == 3:
        return f"{cap(s)} {v} {o}!"
    if k == 4:
        return f'"{cap(o)}," {s} said, "was {r.pick(["here", "gone", "perfect", "useless"])} {a}."'
    if k == 5:
        return f"{cap(s)} {v} {o} ({r.pick(['again', 'twice', 'finally', 'reluctantly'])}) {a}."
    return r.pick(EN_SENTENCES)


# ----------------------------------------------------------- Russian ------
RU_SENTENCES = [
    'Съешь же ещё этих мягких французских булок, да выпей чаю.',
    'В чащах юга жил бы цитрус? Да, но фальшивый экземпляр!',
    'Утром река поднялась почти на два метра выше обычного уровня.',
    'Никто не ожидал, что сборка пройдёт с первого раза.',
    'Он оставил ключи на кухонном столе, рядом с остывшей чашкой кофе.',
    'Музей закрывается в 17:30 по будням и в полдень по воскресеньям.',
    'Подожди — ты сказал, что вчера все тесты были зелёными?',
    'Токенизатор превращает текст в числа, а декодер — числа обратно в текст.',
    'Комиссия одобрила предложение с минимальным перевесом: 7 голосов против 6.',
    'Бабушка хранила все рецепты в потёртой тетради с зелёной обложкой.',
    'Зима в тот год пришла рано, и гавань замёрзла ещё до декабря.',
    '«Поверни налево у пекарни», — сказали нам, но пекарни там давно не было.',
    'Они спорили несколько часов о табах и пробелах и так ни о чём не договорились.',
    'После грозы улицы пахли мокрым асфальтом и скошенной травой.',
    'Зачем назначать выкладку на 16:59 в пятницу?',
    'Для теста понадобится 250 г муки, 2 яйца и щепотка соли.',
    'Мимо причала проплыла маленькая лодка со свёрнутым парусом.',
    'После того как мы убрали лишнее копирование, задержка снизилась на 37 %.',
    'Кот, как обычно, никого не замечал и спал на самом тёплом ноутбуке.',
    'На вокзале не было никого, кроме голубя и гудящего автомата с напитками.',
    'Дети бегали по площади, гоняясь за мыльными пузырями размером с мяч.',
    'К полуночи сервер обработал 1 048 576 запросов без единой ошибки.',
    'Скрипач замолчал, подстроил струну ми и начал часть заново.',
    'Где-то на чердаке лежит коробка писем, которые никто никогда не читал.',
    'Туристы достигли вершины как раз тогда, когда туман рассеялся над долиной.',
    'Дедушка утверждал, что радио работает лучше, если по нему дважды постучать.',
    'Это была та самая тишина, в которой слышно, как тикают часы.',
    'Отчёт нужно сдать до 31.03.2025; опоздавшие работы не принимаются.',
    'Когда погас свет, оркестр продолжил играть по памяти.',
    'В сутках ровно 86 400 секунд, если не считать високосных.',
    'Он написал «TODO: исправить потом» в 2009 году, и это «потом» так и не наступило.',
    'Передай, пожалуйста, соль — нет, другую, крупную.',
    'Первый снег растаял раньше, чем кто-либо успел слепить снеговика.',
    'Ёжик в тумане искал лошадку, но нашёл только филина.',
    'Широкая электрификация южных губерний даст мощный толчок подъёму сельского хозяйства.',
    'Эх, чужак, общий съём цен шляп (юфть) — вдрызг!',
    'Любя, съешь щипцы, — вздохнёт мэр, — кайф жгуч.',
    'Объявление на двери гласило: «Ушёл на обед. Буду через 15 минут».',
    'Сколько бы мы ни спорили, а расписание поездов от этого не изменится.',
    'В 1961 году человек впервые полетел в космос.',
    'Почтальон принёс три письма, две открытки и одну загадочную посылку.',
    'Никогда не откладывай на завтра то, что можно отложить на послезавтра.',
    'Всё смешалось в доме: чемоданы, коробки, книги и кошачьи игрушки.',
    'Программист открыл файл, вздохнул и закрыл его обратно.',
    'Мы выехали затемно, чтобы успеть к открытию рынка.',
    'Вдоль набережной зажглись фонари, и город стал похож на открытку.',
    'Объём памяти — 24 ГиБ, ядер — 2, времени — как всегда, мало.',
    'Ну и погодка сегодня, а?',
    'Учёные подсчитали, что коты спят около 15 часов в сутки.',
    'Прочитав письмо, она долго смотрела в окно и молчала.',
]

RU_SUBJ = [['инженер', 0], ['уставшая студентка', 1], ['мой сосед', 0], ['старый библиотекарь', 0],
    ['команда', 1], ['новый стажёр', 0], ['бездомная собака', 1], ['мэр города', 0], ['компилятор', 0],
    ['оркестр', 0], ['молодая художница', 1], ['ночной сторож', 0], ['метеослужба', 1],
    ['её брат', 0], ['робот', 0], ['капитан корабля', 0], ['вся деревня', 1], ['хозяйка пекарни', 1],
    ['любопытное дитя', 2], ['облако', 2], ['солнце', 2]]
RU_VERB = [['нашёл', 'нашла', 'нашло'], ['починил', 'починила', 'починило'],
    ['проигнорировал', 'проигнорировала', 'проигнорировало'], ['нарисовал', 'нарисовала', 'нарисовало'],
    ['переписал', 'переписала', 'переписало'], ['обнаружил', 'обнаружила', 'обнаружило'],
    ['унёс', 'унесла', 'унесло'], ['одолжил', 'одолжила', 'одолжило'], ['измерил', 'измерила', 'измерило'],
    ['перевёл', 'перевела', 'перевело'], ['проверил', 'проверила', 'проверило'],
    ['забыл', 'забыла', 'забыло'], ['открыл', 'открыла', 'открыло'], ['описал', 'описала', 'описало'],
    ['вернул', 'вернула', 'вернуло'], ['пересчитал', 'пересчитала', 'пересчитало'],
    ['продал', 'продала', 'продало'], ['сфотографировал', 'сфотографировала', 'сфотографировало'],
    ['объяснил', 'объяснила', 'объяснило'], ['спрятал', 'спрятала', 'спрятало']]
RU_OBJ = ['сломанную лампу', 'очень длинное письмо', 'три деревянных стула', 'квартальный отчёт',
    'недописанный роман', 'последний билет на поезд', 'карту северного побережья', 'скрипт сборки',
    'банку мёда', 'пропущенную точку с запятой', 'сорок две открытки', 'ржавый велосипед',
    'странный сигнал', 'бабушкин рецепт', 'старый телескоп', 'коробку виниловых пластинок',
    'файл конфигурации', 'два килограмма яблок', 'теорию всего', 'треснувшее зеркало',
    'ключи от квартиры', 'тёплый шерстяной свитер', 'ошибку в коде']
RU_ADV = ['вчера вечером', 'на рассвете', 'в маленьком городе у реки', 'после долгого совещания',
    'несмотря на дождь', 'почти без ошибок', 'ровно в 7:45', 'примерно за 3,5 часа',
    'в понедельник', 'под шум ветра', 'с большим трудом', 'совершенно случайно', 'до завтрака',
    'посреди ночи', 'уже третий раз за неделю', 'пока все спали', 'на последнем этаже',
    'меньше чем за минуту']
RU_TAIL = ['потому что время поджимало', 'хотя никто об этом не просил', 'и это всех удивило',
    'но результат оказался неожиданным', 'чтобы всё было готово к полуночи', 'чего никто не заметил',
    'как будто это самое обычное дело']


def ru_sentence(r):
    s, g = r.pick(RU_SUBJ)
    v, o, a = r.pick(RU_VERB)[g], r.pick(RU_OBJ), r.pick(RU_ADV)
    k = r.int(7)
    if k == 0:
        return f"{cap(a)} {s} {v} {o}."
    if k == 1:
        return f"{cap(s)} {v} {o} {a}, {r.pick(RU_TAIL)}."
    if k == 2:
        return f"Почему {s} {v} {o}?"
    if k == 3:
        return f"{cap(s)} {v} {o}!"
    if k == 4:
        return f"«{cap(o)}? — переспросил кто-то. — {cap(a)}?»"
    if k == 5:
        return f"{cap(s)} {v} {o} ({r.pick(['снова', 'дважды', 'наконец', 'неохотно'])}) {a}."
    return r.pick(RU_SENTENCES)


def paragraph(r, sentence, lo, hi):
    out = ""
    for i in range(r.range(lo, hi)):
        if i > 0:
            out += " " if r.chance(85) else r.pick(["\n", "\n\n", "  ", " \n"])
        out += sentence(r)
    return out


MIXED_RU_EN = [
    'Запустите `cmake --build build -j2` и проверьте, что CI зелёный.',
    'У нас упал nightly-билд: segfault в libtokenizer.so при вызове encode().',
    'Я сделал git rebase -i HEAD~3 и всё сломал, help!',
    'Модель Llama-3-8B-Instruct выдала 42 токена/с на H100.',
    'Пожалуйста, обновите README.md и CHANGELOG перед релизом v2.1.0.',
    'Deadline — пятница, 18:00 MSK (15:00 UTC).',
    'Это не bug, это feature, сказал product manager.',
    'Open the файл config.yaml and set batch_size: 32, а lr оставьте 3e-4.',
    'Мы используем BPE с byte_fallback и vocab size 32 000.',
    'Pull request #1234 «Fix off-by-one в декодере» ждёт review.',
    'Server responded: 503 Service Unavailable. Повторите попытку позже.',
    'Встреча перенесена на 10:30; link: https://example.com/meet/abc-def?lang=ru&t=1',
]


def mixed_ru_en(r):
    if r.chance(40):
        return r.pick(MIXED_RU_EN)
    parts = [ru_sentence(r) if r.chance(50) else en_sentence(r) for _ in range(r.range(2, 4))]
    return r.pick([" ", " ", "\n", " — "]).join(parts)


# -------------------------------------------------------------- code ------
IDENTS = ['count', 'buffer', 'tokens', 'vocab', 'merges', 'offset', 'idx', 'result', 'data',
    'config', 'path', 'line', 'total', 'max_len', 'userName', 'HTTPClient', 'parse_args', 'kMaxSize',
    'byteFallback', 'i', 'j', 'n', 'x2', '_private', '__init__', 'ЗначениеПоУмолчанию', 'über']
TYPES = ['int', 'size_t', 'std::string', 'uint32_t', 'double', 'bool', 'std::vector<int>',
    'std::string_view', 'const char*', 'auto']


def ident(r):
    return r.pick(IDENTS)


def cpp_snippet(r):
    a, b, ty, n = ident(r), ident(r), r.pick(TYPES), r.range(0, 4096)
    ind = r.pick(["  ", "    ", T])
    cls = cap(b.lstrip("_") or "Thing")
    k = r.int(8)
    if k == 0:
        return rf"""#include <iostream>
#include <vector>

int main(int argc, char** argv) {{
{ind}std::vector<int> {a}({n}, 0);
{ind}for (size_t i = 0; i < {a}.size(); ++i) {{
{ind}{ind}{a}[i] = static_cast<int>(i * i) % {r.range(2, 97)};
{ind}}}
{ind}std::cout << "sum=" << {a}.size() << "\n";
{ind}return 0;
}}"""
    if k == 1:
        return rf"""template <typename T>
{ty} {b}(const T& {a}) noexcept {{
{ind}if ({a}.empty()) return {{}};
{ind}return {a}.front();  // TODO({r.pick(['alice', 'bob', 'ivan'])}): handle errors
}}"""
    if k == 2:
        return rf"""class {cls}Impl final : public Base {{
 public:
{ind}explicit {cls}Impl({ty} v) : value_(v) {{}}
{ind}~{cls}Impl() override = default;

 private:
{ind}{ty} value_{{}};
}};"""
    if k == 3:
        return f"auto it = std::find_if(v.begin(), v.end(), [&](const auto& e) {{ return e.{a} >= {n}; }});"
    if k == 4:
        return rf"""static_assert(sizeof({ty}) <= {r.pick([4, 8, 16, 32])}, "too big");
constexpr std::array<uint8_t, 4> kMagic{{0x{r.int(256):02x}, 0x7f, 0x45, 0x4c}};"""
    if k == 5:
        return rf"""if ({a} != nullptr && {a}->{b} > {n}) {{
{ind}throw std::runtime_error("bad {b}: " + std::to_string({a}->{b}));
}} else if (!{a}) {{
{ind}return std::nullopt;
}}"""
    if k == 6:
        return rf"""/* Multi-line comment
 * with {n} stars and a URL: https://example.org/path?q=1&r={a}
 */
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#pragma once"""
    return rf"""std::map<std::string, {ty}> {a} = {{{{"{b}", {n}}}, {{"x", -1}}}};
for (const auto& [k, v] : {a}) printf("%s=%d\t\n", k.c_str(), (int)v);"""


def py_snippet(r):
    a, b, n = ident(r), ident(r), r.range(0, 100000)
    ind = r.pick(["    ", "  ", T])
    k = r.int(7)
    if k == 0:
        return f'''def {b}({a}, *args, **kwargs):
{ind}"""Return the {a} after {n} steps."""
{ind}for i in range({n}):
{ind}{ind}if i % 3 == 0:
{ind}{ind}{ind}continue
{ind}{ind}{a} += i
{ind}return {a}
'''
    if k == 1:
        return f"""import json, os, sys
from pathlib import Path

with open(Path("data") / "{b}.jsonl", encoding="utf-8") as f:
{ind}rows = [json.loads(l) for l in f if l.strip()]
print(f"{{len(rows):,}} rows, first={{rows[0]!r}}")"""
    if k == 2:
        return f"""class {cap(b.lstrip("_") or "Thing")}:
{ind}def __init__(self, {a}=None):
{ind}{ind}self.{a} = {a} or {{}}

{ind}@property
{ind}def size(self) -> int:
{ind}{ind}return len(self.{a})
"""
    if k == 3:
        return f"""result = [x ** 2 for x in range({r.range(1, 50)}) if x & 1]  # squares of odd numbers
mapping = {{k: v for k, v in zip("abc", (1, 2, 3))}}
lambda_ = lambda s: s.strip().lower().replace("  ", " ")"""
    if k == 4:
        return f"""try:
{ind}value = int(os.environ.get("{a.upper()}", "{n}"))
except (ValueError, KeyError) as exc:
{ind}raise SystemExit(f"bad value: {{exc}}") from exc
finally:
{ind}pass"""
    if k == 5:
        return rf""">>> {a} = "héllo wörld"
>>> {a}.encode("utf-8")
b'h\xc3\xa9llo w\xc3\xb6rld'
>>> len(_)
13"""
    return f"""async def fetch_{r.range(1, 9)}(session, url: str) -> dict[str, int]:
{ind}async with session.get(url, timeout={r.range(1, 60)}) as resp:
{ind}{ind}return await resp.json()
"""


def sh_snippet(r):
    a, n = ident(r).upper(), r.range(1, 64)
    k = r.int(7)
    if k == 0:
        return """#!/usr/bin/env bash
set -euo pipefail
for f in *.txt; do
  echo "processing $f" >&2
  wc -l "$f" | awk '{print $1}'
done"""
    if k == 1:
        return f"""export {a}="$HOME/.cache/{n}" && mkdir -p "${a}" && ls -la "${a}" | grep -v '^total'"""
    if k == 2:
        return f"find . -name '*.cpp' -print0 | xargs -0 grep -nE 'TODO|FIXME' | sort -t: -k1,1 | head -n {n}"
    if k == 3:
        return f"""if [ -z "${a}" ]; then
{T}echo "usage: $0 <file>" 1>&2
{T}exit 2
fi
case "$1" in
{T}-h|--help) usage ;;
{T}*) run "$@" ;;
esac"""
    if k == 4:
        return (f"cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build build -j{r.range(1, 16)} "
                "&& ctest --test-dir build --output-on-failure")
    if k == 5:
        return (f"curl -sSfL -H 'Accept: application/json' "
                f'"https://api.example.com/v{r.range(1, 3)}/items?limit={n}" | jq \'.[] | {{id, name}}\'')
    return f"""all: build
{T}$(CC) $(CFLAGS) -o $@ $^ -lm

clean:
{T}rm -f *.o core.{n}
.PHONY: all clean"""


def other_markup(r):
    n = r.range(1, 999)
    k = r.int(8)
    if k == 0:
        return (f'{{"id": {n}, "name": "item-{n}", "tags": ["a", "b"], "price": {n}.{r.digits(2)}, "ok": true, '
                '"none": null}')
    if k == 1:
        return (f'<div class="card" id="c{n}">\n  <p>Hello, <b>world</b> &amp; friends &lt;3</p>\n'
                f'  <img src="/img/{n}.png" alt=""/>\n</div>')
    if k == 2:
        return (f"| Name | Qty | Price |\n|------|----:|------:|\n| Apples | {n} | ${r.range(1, 9)}.{r.digits(2)} |\n"
                f"| Яблоки | {r.range(1, 99)} | {r.range(10, 999)} ₽ |")
    if k == 3:
        return (f"SELECT id, name, COUNT(*) AS c FROM users WHERE created_at >= '2024-01-0{r.range(1, 9)}' "
                f"GROUP BY id, name HAVING c > {n} ORDER BY c DESC LIMIT 10;")
    if k == 4:
        return (f"# Heading\n\n## Sub-heading {n}\n\n- item one\n- item **two**\n  - nested _item_\n\n> quote\n\n"
                "```bash\necho hi\n```")
    if k == 5:
        return (r"$$\int_0^{\infty} e^{-x^2}\,dx = \frac{\sqrt{\pi}}{2}, \quad \sum_{k=1}^{" + str(n) +
                r"} k = \frac{n(n+1)}{2}$$")
    if k == 6:
        return (f"diff --git a/src/main.cpp b/src/main.cpp\n@@ -{n},7 +{n},8 @@\n-  return 0;\n+  // fixed\n"
                f"+  return {r.range(0, 3)};\n }}")
    return (f"server:\n  host: 0.0.0.0\n  port: {8000 + n}\n  workers: {r.range(1, 32)}\nlogging:\n"
            '  level: "debug"   # trailing comment\n  file: /var/log/app.log')


# ----------------------------------------------------------- numbers ------
UNICODE_DIGITS = ['٠١٢٣٤٥٦٧٨٩', '۰۱۲۳۴۵۶۷۸۹', '०१२३४५६७८९', '০১২৩৪৫৬৭৮৯', '０１２３４５６７８９',
    '𝟎𝟏𝟐𝟑𝟒𝟓𝟔𝟕𝟖𝟗', '①②③④⑤⑥⑦⑧⑨⑩', '²³¹⁰⁴', '½¼¾⅓⅞', 'ⅠⅡⅢⅣⅤⅫⅯ', '〇一二三四五六七八九十百千万']


def numbers(r):
    k = r.int(16)
    if k == 0:
        return str(r.range(0, 9))
    if k == 1:
        return r.digits(r.range(2, 12), True)
    if k == 2:
        return f"{r.range(0, 999)}.{r.digits(r.range(1, 8))}"
    if k == 3:
        return f"+7 ({r.digits(3)}) {r.digits(3)}-{r.digits(2)}-{r.digits(2)}"
    if k == 4:
        return f"+1-{r.digits(3)}-555-{r.digits(4)}, ext. {r.digits(3)}"
    if k == 5:
        return f"8{r.digits(10)}"
    if k == 6:
        return "1234567890" * r.range(1, 6)
    if k == 7:
        return r.digits(r.range(13, 80))
    if k == 8:
        return (f"{r.range(1990, 2030)}-{r.range(1, 12):02d}-{r.range(1, 28):02d}T{r.range(0, 23):02d}:"
                f"{r.digits(2)}:{r.digits(2)}.{r.digits(3)}Z")
    if k == 9:
        return f"{r.range(1, 255)}.{r.range(0, 255)}.{r.range(0, 255)}.{r.range(0, 255)}:{r.range(1, 65535)}"
    if k == 10:
        return f"v{r.range(0, 20)}.{r.range(0, 99)}.{r.range(0, 999)}-rc.{r.range(1, 9)}+build.{r.digits(6)}"
    if k == 11:
        return f"0x{r.u32():X}{r.u32():x} 0b{r.u32():b} 0o{r.u32():o}"
    if k == 12:
        return (f"{r.range(1, 9)}.{r.digits(3)}e{'-' if r.chance(50) else '+'}{r.range(1, 308)} {-r.range(1, 1000)} "
                f"-0.0 +{r.digits(4)} 1e9 .5 5.")
    if k == 13:
        return (f"${r.range(1, 999)},{r.digits(3)}.{r.digits(2)} €{r.range(1, 99)},{r.digits(2)} {r.range(1, 999)} "
                f"{r.digits(3)} {r.digits(3)},{r.digits(2)} ₽ {r.range(0, 100)}% ±{r.range(1, 9)}.{r.digits(1)}‰")
    if k == 14:
        return f"{r.pick(UNICODE_DIGITS)} {r.digits(r.range(1, 5))}{r.pick(UNICODE_DIGITS)}{r.digits(r.range(1, 4))}"
    return (f"Итого: {r.range(1, 99)} шт. × {r.range(1, 9999)},{r.digits(2)} = {r.digits(7, True)} руб.; "
            f"order #{r.digits(8)}; {r.range(1, 12)}/{r.range(1, 31)}/{r.range(10, 99)}; "
            f"{r.digits(4)} {r.digits(4)} {r.digits(4)} {r.digits(4)}")


# -------------------------------------------------------- whitespace ------
WS = [' ', '  ', '   ', '    ', '        ', '\t', '\t\t', ' \t ', '\n', '\n\n', '\n\n\n', '\r\n',
    '\r\n\r\n', '\r', ' \n', '\n ', ' \r\n ', '\u00a0', '\u3000', '\u2003', '\u2009', '\u000b', '\u000c',
    '\u1680', '\u202f', '\u205f', '\u200a']
WORDS = ['hello', 'world', 'foo', 'bar', 'привет', 'мир', 'x', '1', '42', '!', '?', '...', '—',
    'don\'t', 'A', 'ёж', 'CamelCase', 'snake_case', '(', ')', '{', '}', ';', '你好', 'é']


def whitespace(r):
    k = r.int(10)
    if k == 0:
        return r.pick(WS) * r.range(1, 12)
    if k == 1:
        return r.pick(WORDS) + " " * r.range(1, 40)  # trailing spaces
    if k == 2:
        return " " * r.range(1, 20) + r.pick(WORDS)  # leading spaces
    if k == 3:
        return f"{r.pick(WORDS)}\r{r.pick(WORDS)}"  # lone CR
    if k == 4:
        return "\n" * r.range(1, 6) + r.pick(WORDS) + "\n" * r.range(1, 6)
    out = r.pick(WS) if r.chance(30) else ""
    n = r.range(2, 12)
    for i in range(n):
        out += r.pick(WORDS)
        if i + 1 < n or r.chance(30):
            out += r.pick(WS)
    return out


# ------------------------------------------------------------- emoji ------
EMOJI = ['😀', '😂', '🤣', '❤️', '❤', '👍', '👍🏻', '👍🏼', '👍🏽', '👍🏾', '👍🏿', '🙏🏽', '👋🏿',
    '👨‍👩‍👧‍👦', '👩‍💻', '🧑🏽‍🚀', '👩🏻‍❤️‍💋‍👨🏼', '🏳️‍🌈', '🏳️‍⚧️', '❤️‍🔥', '🐻‍❄️', '👁️‍🗨️', '🧔‍♂️',
    '🇷🇺', '🇺🇸', '🇯🇵', '🇺🇦', '🇩🇪', '🏴󠁧󠁢󠁳󠁣󠁴󠁿', '1️⃣', '#️⃣', '*️⃣', '©️', '™️', '☺️', '☺︎', '✈️', '⚡',
    '🔥', '🚀', '🤖', '🦀', '🐍', '🎉', '✅', '❌', '⚠️', '💯', '🫠', '🥲', '🤌', '🪿', '🍕', '🌍']

SENTENCE_END = re.compile(r"[.!?]\Z")


def emoji(r):
    k = r.int(5)
    if k == 0:
        return "".join(r.pick(EMOJI) for _ in range(r.range(1, 30)))
    if k == 1:
        return f"{en_sentence(r)} {r.pick(EMOJI)}{r.pick(EMOJI)}"
    if k == 2:
        return f"{SENTENCE_END.sub('', ru_sentence(r))} {r.pick(EMOJI)}!"
    if k == 3:
        return (f"{r.pick(EMOJI)} {r.pick(['Release', 'Релиз', 'Fix', 'WIP', 'Готово'])}: "
                f"{r.pick(EMOJI)}{r.pick(WORDS)}{r.pick(EMOJI)} {r.pick(EMOJI)}")
    return "".join(r.pick(WORDS) + r.pick(["", " "]) + r.pick(EMOJI) for _ in range(r.range(3, 10)))


# ------------------------------------------------------ mixed scripts ------
SCRIPTS = [
    '你好，世界！今天天气很好。', '我们在北京见面吧。', '机器学习模型需要大量的数据。', '東京は日本の首都です。',
    'ひらがなとカタカナと漢字を混ぜて書きます。', 'コンピューターのプログラム', '안녕하세요, 만나서 반갑습니다.',
    '한국어 텍스트를 토큰화합니다.', 'مرحبا بالعالم! كيف حالك اليوم؟', 'اللغة العربية تكتب من اليمين إلى اليسار.',
    'Καλημέρα κόσμε! Η γλώσσα είναι ελληνική.', 'Ψυχή, ωκεανός, φιλοσοφία.', 'שלום עולם! מה שלומך?',
    'עברית נכתבת מימין לשמאל.', 'नमस्ते दुनिया! आप कैसे हैं?', 'हिन्दी देवनागरी लिपि में लिखी जाती है।',
    'สวัสดีครับ ยินดีที่ได้รู้จัก', 'გამარჯობა, მსოფლიო!', 'Բարեւ աշխարհ', 'Tiếng Việt có nhiều dấu thanh điệu.',
    'Straße, Maßstab, GROẞ, Größe', 'İstanbul, ıslak, İİ ıı', 'Ärger, Öl, Übermut, ÄÖÜ äöü',
    'Ça va? Très bien, merci! L\'été à Montréal.', 'ñandú, pingüino, ¿Qué? ¡Olé!', 'Łódź, Kraków, źdźbło',
    'Cлово с латинской C и русской с', 'Москва — Moscow — Москва', 'Пётр Iвaнoв (mixed Latin/Cyrillic homoglyphs)',
    'Ελληνικά και Русский and English', 'ᚠᚢᚦᚨᚱᚲ', 'ꦄꦏ꧀ꦱꦫꦗꦮ', 'ትግርኛ', 'ᐃᓄᒃᑎᑐᑦ', '𝔉𝔯𝔞𝔨𝔱𝔲𝔯 𝕯𝖔𝖚𝖇𝖑𝖊',
    '𐌰𐌱𐌲 (Gothic)', '𓀀𓀁𓀂 hieroglyphs', 'ﷺ ﷽', 'ﬁﬂﬀ ligatures', 'Ⓐⓑⓒ ⒜⒝', 'ｆｕｌｌｗｉｄｔｈ　ＴＥＸＴ',
]


def mixed_scripts(r):
    parts = []
    for _ in range(r.range(1, 4)):
        k = r.int(4)
        parts.append(en_sentence(r) if k == 0 else ru_sentence(r) if k == 1 else r.pick(SCRIPTS))
    return r.pick([" ", "", "\n", " | ", "、"]).join(parts)


# ---------------------------------------------- combining / NFC / NFD ------
# Only characters assigned long ago are normalized; by the Unicode normalization stability policy their NFD/NFC
# never change, so the output does not depend on the Unicode version of the Python at hand.
NORM_WORDS = ['café', 'naïve', 'résumé', 'Ångström', 'crème brûlée', 'façade', 'jalapeño',
    'Zürich', 'ёлка', 'йогурт', 'Ёжик и Йошкар-Ола', 'Tiếng Việt', 'Phở bò', 'Đà Nẵng', 'Ελληνικά',
    'ἀρχή', 'ῥυθμός', '한국어', '대한민국', 'がぎぐげご', 'パピプペポ', 'Åland', 'Čeština', 'Ørsted', 'ḍḥ']


def nfd(s):
    return unicodedata.normalize("NFD", s)


def nfc(s):
    return unicodedata.normalize("NFC", s)


def combining(r):
    k = r.int(8)
    w = r.pick(NORM_WORDS)
    if k == 0:
        return nfd(w)
    if k == 1:
        return nfc(w)
    if k == 2:
        return f"{nfc(w)} vs {nfd(w)}"
    if k == 3:  # zalgo: stacked combining marks
        s = ""
        for ch in r.pick(["zalgo", "текст", "Hello", "ok"]):
            s += ch
            for _ in range(r.range(0, 6)):
                s += chr(0x300 + r.int(0x70))
        return s
    if k == 4:  # non-canonical mark order, singletons, lone marks
        return r.pick([
            "a\u0302\u0323 vs a\u0323\u0302 vs ậ", "q\u0307\u0323 q\u0323\u0307",
            "\u212b \u2126 \u212a (Angstrom, Ohm, Kelvin signs)",
            "\u0301 lone combining acute at start", "e\u0301\u0301\u0301", "и\u0306 й \u0439", "е\u0308 ё \u0451",
            "ﬁ ² ℌ ① ｶ (compatibility chars: NFC keeps, NFKC would change)", "\u1100\u1161\u11a8 \uac01",
            "A\u030a\u0301 \u01fa", "o\u0308\u0304 ȫ", "\u0915\u093c \u0958 (Devanagari nukta)", "e\u20dd x\u20e3",
        ])
    if k == 5:
        return f"{en_sentence(r)} {nfd(w)}"
    if k == 6:
        return nfd(ru_sentence(r))
    return f"{nfd(w)}{nfd(w)} {nfd(w.upper())}"


# ---------------------------------------------------- control chars ------
CONTROLS = ['\u0000', '\u0001', '\u0002', '\u0007', '\u0008', '\u000b', '\u000c', '\u000e',
    '\u001b', '\u001c', '\u001f', '\u007f', '\u0080', '\u0085', '\u009b', '\u009f', '\u00ad', '\u200b',
    '\u200c', '\u200d', '\u200e', '\u200f', '\u2028', '\u2029', '\u2060', '\u2066', '\u2069', '\ufeff',
    '\ufff9', '\ufffc', '\ufffd', '\ufffe', '\uffff', '\U000e0001', '\U000e007f', '\ue000', '\uf8ff', '\U000f0000',
    '\U0010fffd']


def controls(r):
    k = r.int(5)
    if k == 0:
        return f"\x1b[{r.range(30, 37)}m{r.pick(WORDS)}\x1b[0m \x1b[1;4mbold\x1b[m\x07"
    if k == 1:
        return "".join(r.pick(CONTROLS) for _ in range(r.range(1, 8)))
    out = ""
    for _ in range(r.range(3, 12)):
        out += r.pick(WORDS)
        out += r.pick(CONTROLS) if r.chance(60) else " "
    return out


# -------------------------------------------------------- long words ------
ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
CYR = 'абвгдеёжзийклмнопрстуфхцчшщъыьэюя'
B64 = ALNUM + "+/"


def random_run(r, alphabet, n):
    return "".join(alphabet[r.int(len(alphabet))] for _ in range(n))


def long_word(r):
    n = r.range(200, 1200)
    k = r.int(9)
    if k == 0:
        return random_run(r, "abcdefghijklmnopqrstuvwxyz", n)
    if k == 1:
        return random_run(r, CYR, n)
    if k == 2:
        unit = r.pick(["a", "z", "я", "ab", "la", "Ха", "0", ".", "-", "=", "!", "_", "~", "▁", "Ġ"])
        return unit * r.range(200, 600)
    if k == 3:
        return f"data:image/png;base64,{random_run(r, B64, n)}=="
    if k == 4:
        return (f"https://example.com/{random_run(r, 'abcdefghijklmnopqrstuvwxyz0123456789-_/', n)}"
                f"?q={random_run(r, ALNUM, 20)}")
    if k == 5:
        return random_run(r, "0123456789abcdef", n)
    if k == 6:
        word = "Donaudampfschifffahrtsgesellschaftskapitän"
        return f"Pneumonoultramicroscopicsilicovolcanoconiosis {word * r.range(5, 12)} end"
    if k == 7:
        return random_run(r, "你好世界我们学习机器模型数据东京日本", r.range(200, 400))
    return random_run(r, ALNUM, n)


# ------------------------------------------------------ contractions ------
CONTR = ["don't", "DON'T", "Don'T", "can't", "CAN'T", "won't", "it's", "IT'S", "It'S", "he's",
    "they're", "THEY'RE", "We'Re", "we've", "WE'VE", "I'm", "I'M", "i'M", "you'll", "YOU'LL", "She'Ll",
    "I'd", "I'D", "we'd've", "y'all'd've", "shouldn't've", "SHOULDN'T'VE", "O'Neil", "rock 'n' roll",
    "'tis", "'s", "'S", "''s", "'''", "John's", "JOHN'S", "the '90s", "don’t", "it’s", "isn`t",
    "l'été", "aujourd'hui", "'ſ", "'ſt", "'ll've", "'D", "'M", "'VE", "'RE", "'LL", "'T", "п'ять",
    "'ёлка", "'123", "' s", "'\ns"]


def contractions(r):
    parts = [r.pick(CONTR) for _ in range(r.range(1, 8))]
    line = r.pick([" ", ", ", "", " and ", "\n"]).join(parts)
    return f'{cap(r.pick(EN_SUBJ))} said: "{line}!"' if r.chance(30) else line


# ----------------------------------------------- special-token-like ------
SPECIALS = ['<|begin_of_text|>', '<|end_of_text|>', '<|start_header_id|>', '<|end_header_id|>',
    '<|eot_id|>', '<|reserved_special_token_0|>', '<|reserved_special_token_5|>',
    '<|reserved_special_token_250|>', '<|reserved_special_token_251|>', '<|python_tag|>',
    '<|im_start|>', '<|im_end|>', '<|endoftext|>', '<|object_ref_start|>', '<|vision_pad|>', '<think>',
    '</think>', '<tool_call>', '</tool_call>', '<|fim_prefix|>', '<|fim_middle|>', '<|fim_suffix|>',
    '<|file_sep|>', '<s>', '</s>', '<unk>', '<pad>', '<mask>', '[CLS]', '[SEP]',
    # near misses
    '<|im_start|', '<|IM_START|>', '< s>', '<S>', '<<s>>', '<s><s>', '</s></s>', '<|begin_of_text|><|begin_of_text|>',
    '<|endoftext', '|endoftext|>', '<|begin_of_text |>', '<unk', '<s >', '<|']


def specials(r):
    k = r.int(5)
    if k == 0:
        return ("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
                f"{ru_sentence(r) if r.chance(50) else en_sentence(r)}<|im_end|>\n<|im_start|>assistant\n"
                f"<think>\n\n</think>\n\n{en_sentence(r)}<|im_end|>")
    if k == 1:
        return (f"<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n{en_sentence(r)}<|eot_id|>"
                f"<|start_header_id|>assistant<|end_header_id|>\n\n{ru_sentence(r)}<|eot_id|>")
    if k == 2:
        return f"<s>[INST] {en_sentence(r)} [/INST] {ru_sentence(r)} </s><s>[INST] {r.pick(WORDS)} [/INST]"
    out = ""
    for _ in range(r.range(2, 8)):
        out += r.pick(SPECIALS) if r.chance(50) else r.pick(WORDS)
        out += r.pick(["", " ", "  ", "\n"])
    return out


# ---------------------------------------------------- unicode soup ------
RANGES = [[0x20, 0x7e, 30], [0xa0, 0x24f, 10], [0x400, 0x4ff, 12], [0x370, 0x3ff, 4],
    [0x590, 0x5ff, 3], [0x600, 0x6ff, 4], [0x900, 0x97f, 3], [0xe00, 0xe7f, 2], [0x3040, 0x30ff, 4],
    [0x4e00, 0x9fff, 8], [0xac00, 0xd7a3, 4], [0x300, 0x36f, 4], [0x2000, 0x206f, 3], [0x2190, 0x23ff, 2],
    [0x1f300, 0x1faff, 8], [0x1d400, 0x1d7ff, 2], [0xe000, 0xf8ff, 1], [0xfe00, 0xfe0f, 1],
    [0x20000, 0x2a6df, 2], [0xf0000, 0xffffd, 1], [0x1, 0x1f, 1], [0x7f, 0x9f, 1]]
RANGE_TOTAL = sum(weight for _, _, weight in RANGES)


def soup_char(r):
    w = r.int(RANGE_TOTAL)
    for lo, hi, weight in RANGES:
        if w < weight:
            return chr(lo + r.int(hi - lo + 1))
        w -= weight
    raise AssertionError("unreachable")


def soup(r):
    return "".join(" " if r.chance(15) else soup_char(r) for _ in range(r.range(1, 80)))


# ------------------------------------------------------- everything ------
GENS = [en_sentence, ru_sentence, numbers, emoji, mixed_scripts, combining, controls, contractions, specials,
        whitespace, soup, cpp_snippet, py_snippet, sh_snippet]


def everything(r):
    return "".join(r.pick(GENS)(r) + r.pick(WS) for _ in range(r.range(2, 6)))


# -------------------------------------------------------------- head ------
# Hand-picked edge cases, placed first (golden-*-special.jsonl covers the first 200 lines, so these are
# exercised with special tokens too).
HEAD = [
    '', ' ', '\n', '\t', '\r', '\r\n', '  ', '\n\n', ' \n ', '\u00a0', '\u3000', '\u0000',
    'Hello, world!', 'Привет, мир!', ' Hello', 'Hello ', '  leading and trailing  ',
    'hello\rworld', 'line1\nline2\r\nline3\rline4\n', 'a\u2028b\u2029c\u0085d',
    '<|begin_of_text|>', '<|begin_of_text|>Hello', 'Hello<|end_of_text|>', '<s>', '</s>', '<unk>',
    '<s>Hello</s>', ' <s> hi </s> ', '<|im_start|>user\nhi<|im_end|>', '<|im_start|>', '<|endoftext|>',
    '<think>\nreasoning\n</think>', 'a<s>b', 'text <unk> text',
    "don't DON'T Don'T I'm I'M we'll WE'LL they'd THEY'D you've YOU'VE we're WE'RE it's IT'S",
    "'s't're've'm'll'd", "'S'T'RE'VE'M'LL'D", "'ſ 'ſs", 'don’t',
    'e\u0301 é', 'cafe\u0301 café', '\u1100\u1161\u11a8', 'Å Å Å',
    '1234567890', '12345678901234567890', '3.14159', '+7 (495) 123-45-67', '٣٤٥ ३४५ ３４５',
    '👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🇷🇺', '\u0001\u0007\u001b\u007f\u0085\u2028', '\u001b[31mred\u001b[0m',
    '    indented four', '\tindented tab', 'trailing spaces   ', 'a  b   c    d',
    'x' * 300, 'Ё' * 250, '▁▁▁ ▁hello', 'ĠĠ Ġhello Ċ', '\ufeffBOM at start',
]


# -------------------------------------------------------------- main ------
def build(seed):
    r = Rng(seed)
    plan = [
        (lambda: paragraph(r, en_sentence, 1, 8), 420),
        (lambda: paragraph(r, ru_sentence, 1, 8), 420),
        (lambda: mixed_ru_en(r), 120),
        (lambda: cpp_snippet(r), 130),
        (lambda: py_snippet(r), 130),
        (lambda: sh_snippet(r), 90),
        (lambda: other_markup(r), 80),
        (lambda: numbers(r), 220),
        (lambda: whitespace(r), 160),
        (lambda: emoji(r), 150),
        (lambda: mixed_scripts(r), 200),
        (lambda: combining(r), 130),
        (lambda: controls(r), 90),
        (lambda: long_word(r), 36),
        (lambda: contractions(r), 110),
        (lambda: specials(r), 120),
        (lambda: soup(r), 100),
        (lambda: everything(r), 150),
    ]
    body = [gen() for gen, count in plan for _ in range(count)]
    # One 5000-character run without spaces (mixed alphabets) and one long Cyrillic run, then shuffle everything
    # after the fixed head.
    body.append(random_run(r, ALNUM + CYR + "_-.", 5000))
    body.append(random_run(r, CYR, 3000))
    r.shuffle(body)
    return HEAD + body


LINE_BREAKERS = re.compile("[\u007f-\u009f\u00ad\u2028\u2029\ufeff]")


def json_line(obj):
    """One JSONL line: compact JSON, raw UTF-8, and \\uXXXX for characters some line-oriented readers mangle."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    return LINE_BREAKERS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def main():
    p = argparse.ArgumentParser(description="Writes the tokenizer test corpus (deterministic).")
    p.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "tokenizer", "corpus.jsonl"))
    p.add_argument("--seed", type=int, default=20240611)
    a = p.parse_args()
    lines = build(a.seed)
    for t in lines:
        if any(0xD800 <= ord(c) <= 0xDFFF for c in t):  # a surrogate cannot be written as UTF-8
            raise SystemExit("make_corpus.py: surrogate in corpus")
    data = "".join(json_line({"text": t}) + "\n" for t in lines).encode("utf-8")
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "wb") as f:
        f.write(data)
    print(f"make_corpus.py: wrote {len(lines)} lines, {len(data)} bytes to {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
