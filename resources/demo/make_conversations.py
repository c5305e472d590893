#!/usr/bin/env python3
"""Writes resources/demo/conversations.jsonl: a small deterministic set of Russian and English chat
conversations in the `messages` format (OpenAI / HF: {"messages": [{"role", "content"}, ...]}), for the
"This computer" chat demo, the ruadapt-demo pipeline's calibration LoRA and the tests. Short, regular
answers a tiny model can learn in a minute: capitals, sums, word translations, the next weekday,
opposites; some with a system prompt, some of two turns. Run from anywhere; the output is byte-identical
each time."""
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))

CAPITALS = [("France", "Paris", "Франция", "Париж"), ("Germany", "Berlin", "Германия", "Берлин"),
            ("Italy", "Rome", "Италия", "Рим"), ("Spain", "Madrid", "Испания", "Мадрид"),
            ("Japan", "Tokyo", "Япония", "Токио"), ("Norway", "Oslo", "Норвегия", "Осло"),
            ("Egypt", "Cairo", "Египет", "Каир"), ("Peru", "Lima", "Перу", "Лима"),
            ("Greece", "Athens", "Греция", "Афины"), ("Poland", "Warsaw", "Польша", "Варшава")]
WORDS = [("cat", "кошка"), ("dog", "собака"), ("house", "дом"), ("water", "вода"), ("sun", "солнце"),
         ("book", "книга"), ("tree", "дерево"), ("river", "река"), ("city", "город"), ("bread", "хлеб")]
DAYS_EN = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
DAYS_RU = ["понедельник", "вторник", "среда", "четверг", "пятница", "суббота", "воскресенье"]
OPPOSITES = [("hot", "cold", "горячий", "холодный"), ("big", "small", "большой", "маленький"),
             ("fast", "slow", "быстрый", "медленный"), ("old", "new", "старый", "новый"),
             ("day", "night", "день", "ночь")]
SYSTEM_EN = "You are a helpful assistant. Answer briefly."
SYSTEM_RU = "Ты полезный ассистент. Отвечай кратко."


def turn(role, content):
    return {"role": role, "content": content}


def pairs(rng):
    """(language, question, answer) triples."""
    out = []
    for en, city, ru, gorod in CAPITALS:
        out.append(("en", f"What is the capital of {en}?", f"The capital of {en} is {city}."))
        out.append(("ru", f"Какая столица у страны {ru}?", f"Столица страны {ru} — {gorod}."))
    for _ in range(20):
        a, b = rng.randint(2, 49), rng.randint(2, 49)
        out.append(("en", f"How much is {a} plus {b}?", f"{a} plus {b} is {a + b}."))
        c, d = rng.randint(2, 49), rng.randint(2, 49)
        out.append(("ru", f"Сколько будет {c} плюс {d}?", f"{c} плюс {d} будет {c + d}."))
    for en, ru in WORDS:
        out.append(("en", f"Translate into Russian: {en}", f"In Russian, \"{en}\" is \"{ru}\"."))
        out.append(("ru", f"Переведи на английский: {ru}", f"По-английски «{ru}» — «{en}»."))
    for i in range(7):
        out.append(("en", f"What day comes after {DAYS_EN[i]}?", f"After {DAYS_EN[i]} comes {DAYS_EN[(i + 1) % 7]}."))
        out.append(("ru", f"Какой день идёт после дня «{DAYS_RU[i]}»?",
                    f"После дня «{DAYS_RU[i]}» идёт {DAYS_RU[(i + 1) % 7]}."))
    for en, en_op, ru, ru_op in OPPOSITES:
        out.append(("en", f"What is the opposite of \"{en}\"?", f"The opposite of \"{en}\" is \"{en_op}\"."))
        out.append(("ru", f"Какое слово противоположно слову «{ru}»?", f"Противоположно слову «{ru}» слово «{ru_op}»."))
    return out


def main():
    rng = random.Random(2024)
    triples = pairs(rng)
    rng.shuffle(triples)
    lines = []
    i = 0
    while i < len(triples):
        language, question, answer = triples[i]
        messages = []
        if i % 5 == 0:
            messages.append(turn("system", SYSTEM_EN if language == "en" else SYSTEM_RU))
        messages += [turn("user", question), turn("assistant", answer)]
        if i % 4 == 3 and i + 1 < len(triples):  # a second turn
            _, question2, answer2 = triples[i + 1]
            messages += [turn("user", question2), turn("assistant", answer2)]
            i += 1
        lines.append(json.dumps({"messages": messages}, ensure_ascii=False))
        i += 1
    with open(os.path.join(HERE, "conversations.jsonl"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{len(lines)} conversations, {len(triples)} question-answer pairs")


if __name__ == "__main__":
    main()
