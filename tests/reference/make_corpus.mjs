#!/usr/bin/env node
// Writes the tokenizer test corpus, tests/data/tokenizer/corpus.jsonl: one
// {"text": "..."} per line. Deterministic (seeded PRNG, no clock, no locale,
// no network): the same node major version range (>= 18) gives the same file
// byte for byte. All prose here was composed for this repository; no text is
// copied from elsewhere (see tests/data/tokenizer/README.md).
//
// Usage: node tests/reference/make_corpus.mjs [--out PATH] [--seed N]
//
// Output format notes (for the C++ reader): UTF-8, one JSON object per line,
// "\n" line ends. JSON.stringify escapes are used (\" \\ \b \f \n \r \t and
// \u00XX for other C0 controls); in addition U+007F..U+009F, U+00AD,
// U+2028, U+2029 and U+FEFF are written as \uXXXX so that no line holds a
// character that some readers treat as a line break or strip. Everything else
// (including astral characters) is raw UTF-8, so no surrogate-pair escapes.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..');

function parseArgs(argv) {
  const opts = {
    out: path.join(repoRoot, 'tests', 'data', 'tokenizer', 'corpus.jsonl'),
    seed: 20240611,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--out') opts.out = argv[++i];
    else if (a === '--seed') opts.seed = Number(argv[++i]);
    else if (a === '-h' || a === '--help') {
      console.log('usage: node make_corpus.mjs [--out PATH] [--seed N]');
      process.exit(0);
    } else {
      console.error(`make_corpus.mjs: unknown argument ${a}`);
      process.exit(2);
    }
  }
  return opts;
}

// ---------------------------------------------------------------- PRNG ----
// mulberry32: 32-bit state, integer-only arithmetic => identical everywhere.
class Rng {
  constructor(seed) {
    this.s = seed >>> 0;
  }
  u32() {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  int(n) { // [0, n)
    return this.u32() % n;
  }
  range(lo, hi) { // [lo, hi]
    return lo + this.int(hi - lo + 1);
  }
  chance(num, den = 100) {
    return this.int(den) < num;
  }
  pick(arr) {
    return arr[this.int(arr.length)];
  }
  shuffle(arr) {
    for (let i = arr.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [arr[i], arr[j]] = [arr[j], arr[i]];
    }
    return arr;
  }
  digits(n, noLeadingZero = false) {
    let s = '';
    for (let i = 0; i < n; i++) {
      s += String(i === 0 && noLeadingZero ? 1 + this.int(9) : this.int(10));
    }
    return s;
  }
}

const cap = (s) => s.charAt(0).toUpperCase() + s.slice(1);
const T = '\t';

// ----------------------------------------------------------- English ------
const EN_SENTENCES = [
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
];

const EN_SUBJ = ['the engineer', 'a tired student', 'my neighbor', 'the old librarian', 'our team',
  'the new intern', 'a stray dog', 'the mayor', 'the compiler', 'the orchestra', 'a young painter',
  'the night guard', 'the weather service', 'her brother', 'the robot', 'the ship\'s captain',
  'a retired pilot', 'the whole village', 'the bakery owner', 'a curious child'];
const EN_VERB = ['found', 'fixed', 'ignored', 'painted', 'rewrote', 'discovered', 'carried',
  'borrowed', 'measured', 'translated', 'tested', 'forgot', 'opened', 'repaired', 'described',
  'returned', 'counted', 'sold', 'photographed', 'explained'];
const EN_OBJ = ['the broken lamp', 'a very long letter', 'three wooden chairs', 'the quarterly report',
  'an unfinished novel', 'the last train ticket', 'a map of the northern coast', 'the build script',
  'a jar of honey', 'the missing semicolon', 'forty-two postcards', 'the rusty bicycle',
  'a strange signal', 'the grandmother\'s recipe', 'the old telescope', 'a box of vinyl records',
  'the config file', 'two kilograms of apples', 'the theory of everything', 'a cracked mirror'];
const EN_ADV = ['yesterday evening', 'at dawn', 'in a small town by the river', 'after a long meeting',
  'despite the rain', 'almost without mistakes', 'at exactly 7:45', 'in about 3.5 hours',
  'on Monday', 'under the noise of the wind', 'with great difficulty', 'completely by accident',
  'before breakfast', 'in the middle of the night', 'for the third time this week',
  'while everyone was asleep', 'on the top floor', 'in less than a minute'];
const EN_TAIL = ['because time was running out', 'although nobody had asked', 'and that surprised everyone',
  'but the result was unexpected', 'so that it would be ready by midnight', 'which nobody noticed',
  'and then went home', 'as if it were the most natural thing in the world'];

function enSentence(r) {
  const s = r.pick(EN_SUBJ), v = r.pick(EN_VERB), o = r.pick(EN_OBJ), a = r.pick(EN_ADV);
  switch (r.int(7)) {
    case 0: return `${cap(a)}, ${s} ${v} ${o}.`;
    case 1: return `${cap(s)} ${v} ${o} ${a}, ${r.pick(EN_TAIL)}.`;
    case 2: return `Why has ${s} ${v === 'forgot' ? 'forgotten' : v} ${o}?`;
    case 3: return `${cap(s)} ${v} ${o}!`;
    case 4: return `"${cap(o)}," ${s} said, "was ${r.pick(['here', 'gone', 'perfect', 'useless'])} ${a}."`;
    case 5: return `${cap(s)} ${v} ${o} (${r.pick(['again', 'twice', 'finally', 'reluctantly'])}) ${a}.`;
    default: return r.pick(EN_SENTENCES);
  }
}

// ----------------------------------------------------------- Russian ------
const RU_SENTENCES = [
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
];

const RU_SUBJ = [['инженер', 0], ['уставшая студентка', 1], ['мой сосед', 0], ['старый библиотекарь', 0],
  ['команда', 1], ['новый стажёр', 0], ['бездомная собака', 1], ['мэр города', 0], ['компилятор', 0],
  ['оркестр', 0], ['молодая художница', 1], ['ночной сторож', 0], ['метеослужба', 1],
  ['её брат', 0], ['робот', 0], ['капитан корабля', 0], ['вся деревня', 1], ['хозяйка пекарни', 1],
  ['любопытное дитя', 2], ['облако', 2], ['солнце', 2]];
const RU_VERB = [['нашёл', 'нашла', 'нашло'], ['починил', 'починила', 'починило'],
  ['проигнорировал', 'проигнорировала', 'проигнорировало'], ['нарисовал', 'нарисовала', 'нарисовало'],
  ['переписал', 'переписала', 'переписало'], ['обнаружил', 'обнаружила', 'обнаружило'],
  ['унёс', 'унесла', 'унесло'], ['одолжил', 'одолжила', 'одолжило'], ['измерил', 'измерила', 'измерило'],
  ['перевёл', 'перевела', 'перевело'], ['проверил', 'проверила', 'проверило'],
  ['забыл', 'забыла', 'забыло'], ['открыл', 'открыла', 'открыло'], ['описал', 'описала', 'описало'],
  ['вернул', 'вернула', 'вернуло'], ['пересчитал', 'пересчитала', 'пересчитало'],
  ['продал', 'продала', 'продало'], ['сфотографировал', 'сфотографировала', 'сфотографировало'],
  ['объяснил', 'объяснила', 'объяснило'], ['спрятал', 'спрятала', 'спрятало']];
const RU_OBJ = ['сломанную лампу', 'очень длинное письмо', 'три деревянных стула', 'квартальный отчёт',
  'недописанный роман', 'последний билет на поезд', 'карту северного побережья', 'скрипт сборки',
  'банку мёда', 'пропущенную точку с запятой', 'сорок две открытки', 'ржавый велосипед',
  'странный сигнал', 'бабушкин рецепт', 'старый телескоп', 'коробку виниловых пластинок',
  'файл конфигурации', 'два килограмма яблок', 'теорию всего', 'треснувшее зеркало',
  'ключи от квартиры', 'тёплый шерстяной свитер', 'ошибку в коде'];
const RU_ADV = ['вчера вечером', 'на рассвете', 'в маленьком городе у реки', 'после долгого совещания',
  'несмотря на дождь', 'почти без ошибок', 'ровно в 7:45', 'примерно за 3,5 часа',
  'в понедельник', 'под шум ветра', 'с большим трудом', 'совершенно случайно', 'до завтрака',
  'посреди ночи', 'уже третий раз за неделю', 'пока все спали', 'на последнем этаже',
  'меньше чем за минуту'];
const RU_TAIL = ['потому что время поджимало', 'хотя никто об этом не просил', 'и это всех удивило',
  'но результат оказался неожиданным', 'чтобы всё было готово к полуночи', 'чего никто не заметил',
  'как будто это самое обычное дело'];

function ruSentence(r) {
  const [s, g] = r.pick(RU_SUBJ);
  const v = r.pick(RU_VERB)[g], o = r.pick(RU_OBJ), a = r.pick(RU_ADV);
  switch (r.int(7)) {
    case 0: return `${cap(a)} ${s} ${v} ${o}.`;
    case 1: return `${cap(s)} ${v} ${o} ${a}, ${r.pick(RU_TAIL)}.`;
    case 2: return `Почему ${s} ${v} ${o}?`;
    case 3: return `${cap(s)} ${v} ${o}!`;
    case 4: return `«${cap(o)}? — переспросил кто-то. — ${cap(a)}?»`;
    case 5: return `${cap(s)} ${v} ${o} (${r.pick(['снова', 'дважды', 'наконец', 'неохотно'])}) ${a}.`;
    default: return r.pick(RU_SENTENCES);
  }
}

function paragraph(r, sentenceFn, min, max) {
  const n = r.range(min, max);
  let out = '';
  for (let i = 0; i < n; i++) {
    if (i > 0) out += r.chance(85) ? ' ' : r.pick(['\n', '\n\n', '  ', ' \n']);
    out += sentenceFn(r);
  }
  return out;
}

const MIXED_RU_EN = [
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
];

function mixedRuEn(r) {
  if (r.chance(40)) return r.pick(MIXED_RU_EN);
  const parts = [];
  const n = r.range(2, 4);
  for (let i = 0; i < n; i++) parts.push(r.chance(50) ? ruSentence(r) : enSentence(r));
  return parts.join(r.pick([' ', ' ', '\n', ' — ']));
}

// -------------------------------------------------------------- code ------
const IDENTS = ['count', 'buffer', 'tokens', 'vocab', 'merges', 'offset', 'idx', 'result', 'data',
  'config', 'path', 'line', 'total', 'max_len', 'userName', 'HTTPClient', 'parse_args', 'kMaxSize',
  'byteFallback', 'i', 'j', 'n', 'x2', '_private', '__init__', 'ЗначениеПоУмолчанию', 'über'];
const TYPES = ['int', 'size_t', 'std::string', 'uint32_t', 'double', 'bool', 'std::vector<int>',
  'std::string_view', 'const char*', 'auto'];

function ident(r) {
  return r.pick(IDENTS);
}

function cppSnippet(r) {
  const a = ident(r), b = ident(r), ty = r.pick(TYPES), n = r.range(0, 4096);
  const ind = r.pick(['  ', '    ', T]);
  switch (r.int(8)) {
    case 0: return String.raw`#include <iostream>
#include <vector>

int main(int argc, char** argv) {
${ind}std::vector<int> ${a}(${n}, 0);
${ind}for (size_t i = 0; i < ${a}.size(); ++i) {
${ind}${ind}${a}[i] = static_cast<int>(i * i) % ${r.range(2, 97)};
${ind}}
${ind}std::cout << "sum=" << ${a}.size() << "\n";
${ind}return 0;
}`;
    case 1: return String.raw`template <typename T>
${ty} ${b}(const T& ${a}) noexcept {
${ind}if (${a}.empty()) return {};
${ind}return ${a}.front();  // TODO(${r.pick(['alice', 'bob', 'ivan'])}): handle errors
}`;
    case 2: return String.raw`class ${cap(b.replace(/^_+/, '') || 'Thing')}Impl final : public Base {
 public:
${ind}explicit ${cap(b.replace(/^_+/, '') || 'Thing')}Impl(${ty} v) : value_(v) {}
${ind}~${cap(b.replace(/^_+/, '') || 'Thing')}Impl() override = default;

 private:
${ind}${ty} value_{};
};`;
    case 3: return String.raw`auto it = std::find_if(v.begin(), v.end(), [&](const auto& e) { return e.${a} >= ${n}; });`;
    case 4: return String.raw`static_assert(sizeof(${ty}) <= ${r.pick([4, 8, 16, 32])}, "too big");
constexpr std::array<uint8_t, 4> kMagic{0x${r.int(256).toString(16).padStart(2, '0')}, 0x7f, 0x45, 0x4c};`;
    case 5: return String.raw`if (${a} != nullptr && ${a}->${b} > ${n}) {
${ind}throw std::runtime_error("bad ${b}: " + std::to_string(${a}->${b}));
} else if (!${a}) {
${ind}return std::nullopt;
}`;
    case 6: return String.raw`/* Multi-line comment
 * with ${n} stars and a URL: https://example.org/path?q=1&r=${a}
 */
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#pragma once`;
    default: return String.raw`std::map<std::string, ${ty}> ${a} = {{"${b}", ${n}}, {"x", -1}};
for (const auto& [k, v] : ${a}) printf("%s=%d\t\n", k.c_str(), (int)v);`;
  }
}

function pySnippet(r) {
  const a = ident(r), b = ident(r), n = r.range(0, 100000);
  const ind = r.pick(['    ', '  ', T]);
  switch (r.int(7)) {
    case 0: return `def ${b}(${a}, *args, **kwargs):
${ind}"""Return the ${a} after ${n} steps."""
${ind}for i in range(${n}):
${ind}${ind}if i % 3 == 0:
${ind}${ind}${ind}continue
${ind}${ind}${a} += i
${ind}return ${a}
`;
    case 1: return `import json, os, sys
from pathlib import Path

with open(Path("data") / "${b}.jsonl", encoding="utf-8") as f:
${ind}rows = [json.loads(l) for l in f if l.strip()]
print(f"{len(rows):,} rows, first={rows[0]!r}")`;
    case 2: return `class ${cap(b.replace(/^_+/, '') || 'Thing')}:
${ind}def __init__(self, ${a}=None):
${ind}${ind}self.${a} = ${a} or {}

${ind}@property
${ind}def size(self) -> int:
${ind}${ind}return len(self.${a})
`;
    case 3: return `result = [x ** 2 for x in range(${r.range(1, 50)}) if x & 1]  # squares of odd numbers
mapping = {k: v for k, v in zip("abc", (1, 2, 3))}
lambda_ = lambda s: s.strip().lower().replace("  ", " ")`;
    case 4: return `try:
${ind}value = int(os.environ.get("${a.toUpperCase()}", "${n}"))
except (ValueError, KeyError) as exc:
${ind}raise SystemExit(f"bad value: {exc}") from exc
finally:
${ind}pass`;
    case 5: return `>>> ${a} = "héllo wörld"
>>> ${a}.encode("utf-8")
b'h\\xc3\\xa9llo w\\xc3\\xb6rld'
>>> len(_)
13`;
    default: return `async def fetch_${r.range(1, 9)}(session, url: str) -> dict[str, int]:
${ind}async with session.get(url, timeout=${r.range(1, 60)}) as resp:
${ind}${ind}return await resp.json()
`;
  }
}

function shSnippet(r) {
  const a = ident(r).toUpperCase(), n = r.range(1, 64);
  switch (r.int(7)) {
    case 0: return String.raw`#!/usr/bin/env bash
set -euo pipefail
for f in *.txt; do
  echo "processing $f" >&2
  wc -l "$f" | awk '{print $1}'
done`;
    case 1: return String.raw`export ${a}="$HOME/.cache/${n}" && mkdir -p "$${a}" && ls -la "$${a}" | grep -v '^total'`;
    case 2: return String.raw`find . -name '*.cpp' -print0 | xargs -0 grep -nE 'TODO|FIXME' | sort -t: -k1,1 | head -n ${n}`;
    case 3: return String.raw`if [ -z "$${a}" ]; then
${T}echo "usage: $0 <file>" 1>&2
${T}exit 2
fi
case "$1" in
${T}-h|--help) usage ;;
${T}*) run "$@" ;;
esac`;
    case 4: return `cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build build -j${r.range(1, 16)} && ctest --test-dir build --output-on-failure`;
    case 5: return String.raw`curl -sSfL -H 'Accept: application/json' "https://api.example.com/v${r.range(1, 3)}/items?limit=${n}" | jq '.[] | {id, name}'`;
    default: return `${'all'}: build
${T}$(CC) $(CFLAGS) -o $@ $^ -lm

clean:
${T}rm -f *.o core.${n}
.PHONY: all clean`;
  }
}

function otherMarkup(r) {
  const n = r.range(1, 999);
  switch (r.int(8)) {
    case 0: return `{"id": ${n}, "name": "item-${n}", "tags": ["a", "b"], "price": ${n}.${r.digits(2)}, "ok": true, "none": null}`;
    case 1: return `<div class="card" id="c${n}">\n  <p>Hello, <b>world</b> &amp; friends &lt;3</p>\n  <img src="/img/${n}.png" alt=""/>\n</div>`;
    case 2: return `| Name | Qty | Price |\n|------|----:|------:|\n| Apples | ${n} | $${r.range(1, 9)}.${r.digits(2)} |\n| Яблоки | ${r.range(1, 99)} | ${r.range(10, 999)} ₽ |`;
    case 3: return `SELECT id, name, COUNT(*) AS c FROM users WHERE created_at >= '2024-01-0${r.range(1, 9)}' GROUP BY id, name HAVING c > ${n} ORDER BY c DESC LIMIT 10;`;
    case 4: return `# Heading\n\n## Sub-heading ${n}\n\n- item one\n- item **two**\n  - nested _item_\n\n> quote\n\n\`\`\`bash\necho hi\n\`\`\``;
    case 5: return `$$\\int_0^{\\infty} e^{-x^2}\\,dx = \\frac{\\sqrt{\\pi}}{2}, \\quad \\sum_{k=1}^{${n}} k = \\frac{n(n+1)}{2}$$`;
    case 6: return `diff --git a/src/main.cpp b/src/main.cpp\n@@ -${n},7 +${n},8 @@\n-  return 0;\n+  // fixed\n+  return ${r.range(0, 3)};\n }`;
    default: return `server:\n  host: 0.0.0.0\n  port: ${8000 + n}\n  workers: ${r.range(1, 32)}\nlogging:\n  level: "debug"   # trailing comment\n  file: /var/log/app.log`;
  }
}

// ----------------------------------------------------------- numbers ------
const UNICODE_DIGITS = ['٠١٢٣٤٥٦٧٨٩', '۰۱۲۳۴۵۶۷۸۹', '०१२३४५६७८९', '০১২৩৪৫৬৭৮৯', '０１２３４５６７８９',
  '𝟎𝟏𝟐𝟑𝟒𝟓𝟔𝟕𝟖𝟗', '①②③④⑤⑥⑦⑧⑨⑩', '²³¹⁰⁴', '½¼¾⅓⅞', 'ⅠⅡⅢⅣⅤⅫⅯ', '〇一二三四五六七八九十百千万'];

function numbers(r) {
  switch (r.int(16)) {
    case 0: return String(r.range(0, 9));
    case 1: return r.digits(r.range(2, 12), true);
    case 2: return `${r.range(0, 999)}.${r.digits(r.range(1, 8))}`;
    case 3: return `+7 (${r.digits(3)}) ${r.digits(3)}-${r.digits(2)}-${r.digits(2)}`;
    case 4: return `+1-${r.digits(3)}-555-${r.digits(4)}, ext. ${r.digits(3)}`;
    case 5: return `8${r.digits(10)}`;
    case 6: return '1234567890'.repeat(r.range(1, 6));
    case 7: return r.digits(r.range(13, 80));
    case 8: return `${r.range(1990, 2030)}-${String(r.range(1, 12)).padStart(2, '0')}-${String(r.range(1, 28)).padStart(2, '0')}T${String(r.range(0, 23)).padStart(2, '0')}:${r.digits(2)}:${r.digits(2)}.${r.digits(3)}Z`;
    case 9: return `${r.range(1, 255)}.${r.range(0, 255)}.${r.range(0, 255)}.${r.range(0, 255)}:${r.range(1, 65535)}`;
    case 10: return `v${r.range(0, 20)}.${r.range(0, 99)}.${r.range(0, 999)}-rc.${r.range(1, 9)}+build.${r.digits(6)}`;
    case 11: return `0x${r.u32().toString(16).toUpperCase()}${r.u32().toString(16)} 0b${r.u32().toString(2)} 0o${r.u32().toString(8)}`;
    case 12: return `${r.range(1, 9)}.${r.digits(3)}e${r.chance(50) ? '-' : '+'}${r.range(1, 308)} ${-r.range(1, 1000)} -0.0 +${r.digits(4)} 1e9 .5 5.`;
    case 13: return `$${r.range(1, 999)},${r.digits(3)}.${r.digits(2)} €${r.range(1, 99)},${r.digits(2)} ${r.range(1, 999)} ${r.digits(3)} ${r.digits(3)},${r.digits(2)} ₽ ${r.range(0, 100)}% ±${r.range(1, 9)}.${r.digits(1)}‰`;
    case 14: return `${r.pick(UNICODE_DIGITS)} ${r.digits(r.range(1, 5))}${r.pick(UNICODE_DIGITS)}${r.digits(r.range(1, 4))}`;
    default: return `Итого: ${r.range(1, 99)} шт. × ${r.range(1, 9999)},${r.digits(2)} = ${r.digits(7, true)} руб.; order #${r.digits(8)}; ${r.range(1, 12)}/${r.range(1, 31)}/${r.range(10, 99)}; ${r.digits(4)} ${r.digits(4)} ${r.digits(4)} ${r.digits(4)}`;
  }
}

// -------------------------------------------------------- whitespace ------
const WS = [' ', '  ', '   ', '    ', '        ', '\t', '\t\t', ' \t ', '\n', '\n\n', '\n\n\n', '\r\n',
  '\r\n\r\n', '\r', ' \n', '\n ', ' \r\n ', '\u00a0', '\u3000', '\u2003', '\u2009', '\u000b', '\u000c',
  '\u1680', '\u202f', '\u205f', '\u200a'];
const WORDS = ['hello', 'world', 'foo', 'bar', 'привет', 'мир', 'x', '1', '42', '!', '?', '...', '—',
  'don\'t', 'A', 'ёж', 'CamelCase', 'snake_case', '(', ')', '{', '}', ';', '你好', 'é'];

function whitespace(r) {
  const k = r.int(10);
  if (k === 0) return r.pick(WS).repeat(r.range(1, 12));
  if (k === 1) return `${r.pick(WORDS)}${' '.repeat(r.range(1, 40))}`; // trailing spaces
  if (k === 2) return `${' '.repeat(r.range(1, 20))}${r.pick(WORDS)}`; // leading spaces
  if (k === 3) return `${r.pick(WORDS)}\r${r.pick(WORDS)}`; // lone CR
  if (k === 4) return `${'\n'.repeat(r.range(1, 6))}${r.pick(WORDS)}${'\n'.repeat(r.range(1, 6))}`;
  let out = r.chance(30) ? r.pick(WS) : '';
  const n = r.range(2, 12);
  for (let i = 0; i < n; i++) {
    out += r.pick(WORDS);
    if (i + 1 < n || r.chance(30)) out += r.pick(WS);
  }
  return out;
}

// ------------------------------------------------------------- emoji ------
const EMOJI = ['😀', '😂', '🤣', '❤️', '❤', '👍', '👍🏻', '👍🏼', '👍🏽', '👍🏾', '👍🏿', '🙏🏽', '👋🏿',
  '👨‍👩‍👧‍👦', '👩‍💻', '🧑🏽‍🚀', '👩🏻‍❤️‍💋‍👨🏼', '🏳️‍🌈', '🏳️‍⚧️', '❤️‍🔥', '🐻‍❄️', '👁️‍🗨️', '🧔‍♂️',
  '🇷🇺', '🇺🇸', '🇯🇵', '🇺🇦', '🇩🇪', '🏴󠁧󠁢󠁳󠁣󠁴󠁿', '1️⃣', '#️⃣', '*️⃣', '©️', '™️', '☺️', '☺︎', '✈️', '⚡',
  '🔥', '🚀', '🤖', '🦀', '🐍', '🎉', '✅', '❌', '⚠️', '💯', '🫠', '🥲', '🤌', '🪿', '🍕', '🌍'];

function emoji(r) {
  const k = r.int(5);
  if (k === 0) {
    let s = '';
    const n = r.range(1, 30);
    for (let i = 0; i < n; i++) s += r.pick(EMOJI);
    return s;
  }
  if (k === 1) return `${enSentence(r)} ${r.pick(EMOJI)}${r.pick(EMOJI)}`;
  if (k === 2) return `${ruSentence(r).replace(/[.!?]$/, '')} ${r.pick(EMOJI)}!`;
  if (k === 3) return `${r.pick(EMOJI)} ${r.pick(['Release', 'Релиз', 'Fix', 'WIP', 'Готово'])}: ${r.pick(EMOJI)}${r.pick(WORDS)}${r.pick(EMOJI)} ${r.pick(EMOJI)}`;
  let s = '';
  const n = r.range(3, 10);
  for (let i = 0; i < n; i++) s += r.pick(WORDS) + r.pick(['', ' ']) + r.pick(EMOJI);
  return s;
}

// ------------------------------------------------------ mixed scripts ------
const SCRIPTS = [
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
];

function mixedScripts(r) {
  const n = r.range(1, 4);
  const parts = [];
  for (let i = 0; i < n; i++) {
    const k = r.int(4);
    if (k === 0) parts.push(enSentence(r));
    else if (k === 1) parts.push(ruSentence(r));
    else parts.push(r.pick(SCRIPTS));
  }
  return parts.join(r.pick([' ', '', '\n', ' | ', '、']));
}

// ---------------------------------------------- combining / NFC / NFD ------
// Only characters assigned long ago are passed through normalize(); by the
// Unicode normalization stability policy their NFD/NFC never change, so the
// output does not depend on node's ICU version.
const NORM_WORDS = ['café', 'naïve', 'résumé', 'Ångström', 'crème brûlée', 'façade', 'jalapeño',
  'Zürich', 'ёлка', 'йогурт', 'Ёжик и Йошкар-Ола', 'Tiếng Việt', 'Phở bò', 'Đà Nẵng', 'Ελληνικά',
  'ἀρχή', 'ῥυθμός', '한국어', '대한민국', 'がぎぐげご', 'パピプペポ', 'Åland', 'Čeština', 'Ørsted', 'ḍḥ'];

function combining(r) {
  const k = r.int(8);
  const w = r.pick(NORM_WORDS);
  if (k === 0) return w.normalize('NFD');
  if (k === 1) return w.normalize('NFC');
  if (k === 2) return `${w.normalize('NFC')} vs ${w.normalize('NFD')}`;
  if (k === 3) { // zalgo: stacked combining marks
    let s = '';
    const base = r.pick(['zalgo', 'текст', 'Hello', 'ok']);
    for (const ch of base) {
      s += ch;
      const m = r.range(0, 6);
      for (let i = 0; i < m; i++) s += String.fromCharCode(0x300 + r.int(0x70));
    }
    return s;
  }
  if (k === 4) { // non-canonical mark order, singletons, lone marks
    return r.pick([
      'a\u0302\u0323 vs a\u0323\u0302 vs ậ', 'q\u0307\u0323 q\u0323\u0307', '\u212b \u2126 \u212a (Angstrom, Ohm, Kelvin signs)',
      '\u0301 lone combining acute at start', 'e\u0301\u0301\u0301', 'и\u0306 й \u0439', 'е\u0308 ё \u0451',
      'ﬁ ² ℌ ① ｶ (compatibility chars: NFC keeps, NFKC would change)', '\u1100\u1161\u11a8 \uac01',
      'A\u030a\u0301 \u01fa', 'o\u0308\u0304 ȫ', '\u0915\u093c \u0958 (Devanagari nukta)', 'e\u20dd x\u20e3',
    ]);
  }
  if (k === 5) return `${enSentence(r)} ${w.normalize('NFD')}`;
  if (k === 6) return `${ruSentence(r).normalize('NFD')}`;
  return `${w.normalize('NFD')}${w.normalize('NFD')} ${w.toUpperCase().normalize('NFD')}`;
}

// ---------------------------------------------------- control chars ------
const CONTROLS = ['\u0000', '\u0001', '\u0002', '\u0007', '\u0008', '\u000b', '\u000c', '\u000e',
  '\u001b', '\u001c', '\u001f', '\u007f', '\u0080', '\u0085', '\u009b', '\u009f', '\u00ad', '\u200b',
  '\u200c', '\u200d', '\u200e', '\u200f', '\u2028', '\u2029', '\u2060', '\u2066', '\u2069', '\ufeff',
  '\ufff9', '\ufffc', '\ufffd', '\ufffe', '\uffff', '\u{e0001}', '\u{e007f}', '\ue000', '\uf8ff', '\u{f0000}',
  '\u{10fffd}'];

function controls(r) {
  const k = r.int(5);
  if (k === 0) return `\u001b[${r.range(30, 37)}m${r.pick(WORDS)}\u001b[0m \u001b[1;4mbold\u001b[m\u0007`;
  if (k === 1) {
    let s = '';
    const n = r.range(1, 8);
    for (let i = 0; i < n; i++) s += r.pick(CONTROLS);
    return s;
  }
  let out = '';
  const n = r.range(3, 12);
  for (let i = 0; i < n; i++) {
    out += r.pick(WORDS);
    out += r.chance(60) ? r.pick(CONTROLS) : ' ';
  }
  return out;
}

// -------------------------------------------------------- long words ------
const ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const CYR = 'абвгдеёжзийклмнопрстуфхцчшщъыьэюя';
const B64 = `${ALNUM}+/`;

function randomRun(r, alphabet, n) {
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet[r.int(alphabet.length)];
  return s;
}

function longWord(r) {
  const n = r.range(200, 1200);
  switch (r.int(9)) {
    case 0: return randomRun(r, 'abcdefghijklmnopqrstuvwxyz', n);
    case 1: return randomRun(r, CYR, n);
    case 2: return r.pick(['a', 'z', 'я', 'ab', 'la', 'Ха', '0', '.', '-', '=', '!', '_', '~', '▁', 'Ġ']).repeat(r.range(200, 600));
    case 3: return `data:image/png;base64,${randomRun(r, B64, n)}==`;
    case 4: return `https://example.com/${randomRun(r, 'abcdefghijklmnopqrstuvwxyz0123456789-_/', n)}?q=${randomRun(r, ALNUM, 20)}`;
    case 5: return randomRun(r, '0123456789abcdef', n);
    case 6: return `Pneumonoultramicroscopicsilicovolcanoconiosis ${'Donaudampfschifffahrtsgesellschaftskapitän'.repeat(r.range(5, 12))} end`;
    case 7: return randomRun(r, '你好世界我们学习机器模型数据东京日本', r.range(200, 400));
    default: return randomRun(r, ALNUM, n);
  }
}

// ------------------------------------------------------ contractions ------
const CONTR = ["don't", "DON'T", "Don'T", "can't", "CAN'T", "won't", "it's", "IT'S", "It'S", "he's",
  "they're", "THEY'RE", "We'Re", "we've", "WE'VE", "I'm", "I'M", "i'M", "you'll", "YOU'LL", "She'Ll",
  "I'd", "I'D", "we'd've", "y'all'd've", "shouldn't've", "SHOULDN'T'VE", "O'Neil", "rock 'n' roll",
  "'tis", "'s", "'S", "''s", "'''", "John's", "JOHN'S", "the '90s", "don’t", "it’s", "isn`t",
  "l'été", "aujourd'hui", "'ſ", "'ſt", "'ll've", "'D", "'M", "'VE", "'RE", "'LL", "'T", "п'ять",
  "'ёлка", "'123", "' s", "'\ns"];

function contractions(r) {
  const n = r.range(1, 8);
  const parts = [];
  for (let i = 0; i < n; i++) parts.push(r.pick(CONTR));
  const sep = r.pick([' ', ', ', '', ' and ', '\n']);
  const line = parts.join(sep);
  return r.chance(30) ? `${cap(r.pick(EN_SUBJ))} said: "${line}!"` : line;
}

// ----------------------------------------------- special-token-like ------
const SPECIALS = ['<|begin_of_text|>', '<|end_of_text|>', '<|start_header_id|>', '<|end_header_id|>',
  '<|eot_id|>', '<|reserved_special_token_0|>', '<|reserved_special_token_5|>',
  '<|reserved_special_token_250|>', '<|reserved_special_token_251|>', '<|python_tag|>',
  '<|im_start|>', '<|im_end|>', '<|endoftext|>', '<|object_ref_start|>', '<|vision_pad|>', '<think>',
  '</think>', '<tool_call>', '</tool_call>', '<|fim_prefix|>', '<|fim_middle|>', '<|fim_suffix|>',
  '<|file_sep|>', '<s>', '</s>', '<unk>', '<pad>', '<mask>', '[CLS]', '[SEP]',
  // near misses
  '<|im_start|', '<|IM_START|>', '< s>', '<S>', '<<s>>', '<s><s>', '</s></s>', '<|begin_of_text|><|begin_of_text|>',
  '<|endoftext', '|endoftext|>', '<|begin_of_text |>', '<unk', '<s >', '<|'];

function specials(r) {
  const k = r.int(5);
  if (k === 0) {
    return `<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n${r.chance(50) ? ruSentence(r) : enSentence(r)}<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n${enSentence(r)}<|im_end|>`;
  }
  if (k === 1) {
    return `<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n${enSentence(r)}<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n${ruSentence(r)}<|eot_id|>`;
  }
  if (k === 2) return `<s>[INST] ${enSentence(r)} [/INST] ${ruSentence(r)} </s><s>[INST] ${r.pick(WORDS)} [/INST]`;
  let out = '';
  const n = r.range(2, 8);
  for (let i = 0; i < n; i++) {
    out += r.chance(50) ? r.pick(SPECIALS) : r.pick(WORDS);
    out += r.pick(['', ' ', '  ', '\n']);
  }
  return out;
}

// ---------------------------------------------------- unicode soup ------
const RANGES = [[0x20, 0x7e, 30], [0xa0, 0x24f, 10], [0x400, 0x4ff, 12], [0x370, 0x3ff, 4],
  [0x590, 0x5ff, 3], [0x600, 0x6ff, 4], [0x900, 0x97f, 3], [0xe00, 0xe7f, 2], [0x3040, 0x30ff, 4],
  [0x4e00, 0x9fff, 8], [0xac00, 0xd7a3, 4], [0x300, 0x36f, 4], [0x2000, 0x206f, 3], [0x2190, 0x23ff, 2],
  [0x1f300, 0x1faff, 8], [0x1d400, 0x1d7ff, 2], [0xe000, 0xf8ff, 1], [0xfe00, 0xfe0f, 1],
  [0x20000, 0x2a6df, 2], [0xf0000, 0xffffd, 1], [0x1, 0x1f, 1], [0x7f, 0x9f, 1]];
const RANGE_TOTAL = RANGES.reduce((a, x) => a + x[2], 0);

function soupChar(r) {
  let w = r.int(RANGE_TOTAL);
  for (const [lo, hi, wt] of RANGES) {
    if (w < wt) return String.fromCodePoint(lo + r.int(hi - lo + 1));
    w -= wt;
  }
  throw new Error('unreachable');
}

function soup(r) {
  let s = '';
  const n = r.range(1, 80);
  for (let i = 0; i < n; i++) s += r.chance(15) ? ' ' : soupChar(r);
  return s;
}

// ------------------------------------------------------- everything ------
const GENS = [enSentence, ruSentence, numbers, emoji, mixedScripts, combining, controls, contractions,
  specials, whitespace, soup, cppSnippet, pySnippet, shSnippet];

function everything(r) {
  const n = r.range(2, 6);
  let s = '';
  for (let i = 0; i < n; i++) s += r.pick(GENS)(r) + r.pick(WS);
  return s;
}

// -------------------------------------------------------------- head ------
// Hand-picked edge cases, placed first (golden-*-special.jsonl covers the
// first 200 lines, so these are exercised with special tokens too).
const HEAD = [
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
  'x'.repeat(300), 'Ё'.repeat(250), '▁▁▁ ▁hello', 'ĠĠ Ġhello Ċ', '\ufeffBOM at start',
];

// -------------------------------------------------------------- main ------
function build(seed) {
  const r = new Rng(seed);
  const plan = [
    [() => paragraph(r, enSentence, 1, 8), 420],
    [() => paragraph(r, ruSentence, 1, 8), 420],
    [() => mixedRuEn(r), 120],
    [() => cppSnippet(r), 130],
    [() => pySnippet(r), 130],
    [() => shSnippet(r), 90],
    [() => otherMarkup(r), 80],
    [() => numbers(r), 220],
    [() => whitespace(r), 160],
    [() => emoji(r), 150],
    [() => mixedScripts(r), 200],
    [() => combining(r), 130],
    [() => controls(r), 90],
    [() => longWord(r), 36],
    [() => contractions(r), 110],
    [() => specials(r), 120],
    [() => soup(r), 100],
    [() => everything(r), 150],
  ];
  const body = [];
  for (const [gen, count] of plan) for (let i = 0; i < count; i++) body.push(gen());
  // One 5000-character run without spaces (mixed alphabets) and one long
  // Cyrillic run, then shuffle everything after the fixed head.
  body.push(randomRun(r, ALNUM + CYR + '_-.', 5000));
  body.push(randomRun(r, CYR, 3000));
  r.shuffle(body);
  return HEAD.concat(body);
}

function jsonLine(text) {
  const s = JSON.stringify({ text });
  // Escape characters that some line-oriented readers mangle.
  return s.replace(/[\u007f-\u009f\u00ad\u2028\u2029\ufeff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  const lines = build(opts.seed);
  for (const t of lines) {
    // Guard: no lone surrogates (they cannot be encoded as UTF-8).
    if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(t)) {
      throw new Error('lone surrogate in corpus');
    }
  }
  const out = lines.map(jsonLine).join('\n') + '\n';
  fs.mkdirSync(path.dirname(opts.out), { recursive: true });
  fs.writeFileSync(opts.out, out);
  console.error(`make_corpus.mjs: wrote ${lines.length} lines, ${Buffer.byteLength(out)} bytes to ${opts.out}`);
}

main();
