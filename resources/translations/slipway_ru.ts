<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="ru_RU">
<context>
    <name>FieldUnit</name>
    <message>
        <location filename="../../app/editor/field_editor.cpp" line="+42"/>
        <source>tokens</source>
        <translation>токенов</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>threads</source>
        <translation>потоков</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>epochs</source>
        <translation>эпох</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+1"/>
        <location line="+5"/>
        <location line="+1"/>
        <location line="+1"/>
        <source>steps</source>
        <translation>шагов</translation>
    </message>
    <message>
        <location line="-6"/>
        <source>share of steps</source>
        <translation>доля шагов</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+1"/>
        <source>sequences</source>
        <translation>последовательностей</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>micro-steps</source>
        <translation>микрошагов</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>checkpoints</source>
        <translation>чекпойнтов</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>per step</source>
        <translation>на шаг</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>MiB</source>
        <translation>МиБ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>s</source>
        <translation>с</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>nodes</source>
        <translation>узлов</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>GPUs</source>
        <translation>GPU</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>tasks</source>
        <translation>задач</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>CPUs</source>
        <translation>CPU</translation>
    </message>
</context>
<context>
    <name>ImageTasks</name>
    <message>
        <location filename="../../app/images/image_tasks.cpp" line="+158"/>
        <source>An image build or import is running: its output is below.</source>
        <translation>Идёт сборка или импорт образа: вывод ниже.</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>This computer has no build host: choose a cluster under &quot;Run on&quot;; its login host builds with docker and imports with enroot.</source>
        <translation>У этого компьютера нет узла сборки: выберите кластер в поле «Выполнять на»; его узел входа соберёт образ через docker и импортирует через enroot.</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Image tag: %1</source>
        <translation>Тег образа: %1</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Fix the run config&apos;s problems first: only a valid config is built.</source>
        <translation>Сначала исправьте ошибки в конфигурации: собирается только корректная конфигурация.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>docker build %1 on %2 from this Dockerfile; the output streams below.</source>
        <translation>docker build %1 на %2 по этому Dockerfile; вывод появится ниже.</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Cluster %1 runs bare srun (container: none): a .sqsh is only used with pyxis.</source>
        <translation>Кластер %1 использует srun без контейнера (container: none): файл .sqsh нужен только с pyxis.</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>slurm.container_image is empty: the run uses no container image to import into.</source>
        <translation>slurm.container_image пуст: у запуска нет образа контейнера, в который импортировать.</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>slurm.container_image is not a .sqsh file (pyxis pulls registry images itself).</source>
        <translation>slurm.container_image не файл .sqsh (образы из реестра pyxis загружает сам).</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>enroot import %1 (built on %2) into %3.</source>
        <translation>enroot import %1 (собран на %2) в %3.</translation>
    </message>
</context>
<context>
    <name>Presets</name>
    <message>
        <location filename="../../app/editor/presets.cpp" line="+73"/>
        <source>LoRA rank %1</source>
        <translation>LoRA ранга %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>embeddings only</source>
        <translation>только эмбеддинги</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>full fine-tune</source>
        <translation>полное дообучение</translation>
    </message>
    <message numerus="yes">
        <location line="+5"/>
        <source>%n GPU(s)</source>
        <translation>
            <numerusform>%n GPU</numerusform>
            <numerusform>%n GPU</numerusform>
            <numerusform>%n GPU</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>%n CPU rank(s)</source>
        <translation>
            <numerusform>%n CPU-процесс</numerusform>
            <numerusform>%n CPU-процесса</numerusform>
            <numerusform>%n CPU-процессов</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>%n node(s)</source>
        <translation>
            <numerusform>%n узел</numerusform>
            <numerusform>%n узла</numerusform>
            <numerusform>%n узлов</numerusform>
        </translation>
    </message>
    <message>
        <location line="+2"/>
        <source>global batch %1 × %2 tokens</source>
        <translation>глобальный батч %1 × %2 токенов</translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <location filename="../../app/clusters_page.cpp" line="+29"/>
        <source>This computer</source>
        <translation>Этот компьютер</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>pyxis (srun --container-image)</source>
        <translation>pyxis (srun --container-image)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>apptainer (exec in the run&apos;s image)</source>
        <translation>apptainer (exec в образе запуска)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>singularity (exec in the run&apos;s image)</source>
        <translation>singularity (exec в образе запуска)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>none (bare srun)</source>
        <translation>none (srun без контейнера)</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>the image&apos;s slipway-engine</source>
        <translation>slipway-engine из образа</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>this computer&apos;s, uploaded with each run</source>
        <translation>движок этого компьютера, загружается с каждым запуском</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>built on the cluster, once per environment</source>
        <translation>собирается на кластере, один раз для каждого окружения</translation>
    </message>
    <message>
        <location filename="../../app/clusters/cluster_dialogs.cpp" line="+160"/>
        <source>&lt;p&gt;The authenticity of host &lt;b&gt;%1&lt;/b&gt; (port %2) can&apos;t be established: its key is not in %3.&lt;/p&gt;&lt;p&gt;%4 key fingerprint:&lt;br&gt;&lt;code&gt;%5&lt;/code&gt;&lt;/p&gt;&lt;p&gt;Compare it with the fingerprint your cluster&apos;s administrators publish before trusting it.&lt;/p&gt;</source>
        <translation>&lt;p&gt;Подлинность узла &lt;b&gt;%1&lt;/b&gt; (порт %2) не удаётся установить: его ключа нет в %3.&lt;/p&gt;&lt;p&gt;Отпечаток ключа %4:&lt;br&gt;&lt;code&gt;%5&lt;/code&gt;&lt;/p&gt;&lt;p&gt;Прежде чем доверять ему, сверьте его с отпечатком, который публикуют администраторы кластера.&lt;/p&gt;</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Unknown host key</source>
        <translation>Неизвестный ключ узла</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Accept and save</source>
        <translation>Принять и сохранить</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Accept once</source>
        <translation>Принять один раз</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Reject</source>
        <translation>Отклонить</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Key passphrase</source>
        <translation>Пароль ключа</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Passphrase for %1 (used once, not stored):</source>
        <translation>Пароль для %1 (используется один раз, не сохраняется):</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Password</source>
        <translation>Пароль</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Password of %1@%2 (used once, not stored):</source>
        <translation>Пароль %1@%2 (используется один раз, не сохраняется):</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>Sign in (two-factor)</source>
        <translation>Вход (двухфакторный)</translation>
    </message>
    <message>
        <location filename="../../app/editor/plan_strip.cpp" line="+19"/>
        <source>&lt;b style=&quot;color:%1&quot;&gt;fits&lt;/b&gt;, %2% to spare</source>
        <translation>&lt;b style=&quot;color:%1&quot;&gt;помещается&lt;/b&gt;, запас %2%</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>&lt;b style=&quot;color:%1&quot;&gt;does not fit&lt;/b&gt;</source>
        <translation>&lt;b style=&quot;color:%1&quot;&gt;не помещается&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 to train (%2 steps)</source>
        <translation>обучение %1 (шагов: %2)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>time to train depends on the data (no max_steps)</source>
        <translation>время обучения зависит от данных (max_steps не задан)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&lt;b&gt;Plan&lt;/b&gt;: peak &lt;b&gt;%1&lt;/b&gt; of %2 per device (%3) &amp;middot; %4 per step &amp;middot; %5 &amp;middot; %6 tokens per step</source>
        <translation>&lt;b&gt;План&lt;/b&gt;: пик &lt;b&gt;%1&lt;/b&gt; из %2 на устройство (%3) &amp;middot; %4 на шаг &amp;middot; %5 &amp;middot; %6 токенов на шаг</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>%1 MiB</source>
        <translation>%1 МиБ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 GiB</source>
        <translation>%1 ГиБ</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 B</source>
        <comment>billions</comment>
        <translation>%1 млрд</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 M</source>
        <comment>millions</comment>
        <translation>%1 млн</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 k</source>
        <comment>thousands</comment>
        <translation>%1 тыс.</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 s</source>
        <translation>%1 с</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 min</source>
        <translation>%1 мин</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 h</source>
        <translation>%1 ч</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 days</source>
        <translation>%1 дн.</translation>
    </message>
</context>
<context>
    <name>RunConfigField</name>
    <message>
        <location filename="../../build/app/i18n/run_config_field_strings.cpp" line="+111"/>
        <source>Time limits and preemption</source>
        <translation>Лимит времени и вытеснение</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Checkpoint before the time limit (s)</source>
        <translation>Контрольная точка до лимита времени (с)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Requeue and resume</source>
        <translation>Вернуть в очередь и продолжить</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Most restarts</source>
        <translation>Не больше перезапусков</translation>
    </message>
    <message>
        <location line="-111"/>
        <source>Run</source>
        <translation>Запуск</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Schema</source>
        <translation>Схема</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run name</source>
        <translation>Имя запуска</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Description</source>
        <translation>Описание</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Model</source>
        <translation>Модель</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Model folder</source>
        <translation>Папка модели</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Weight precision</source>
        <translation>Точность весов</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Initial weights</source>
        <translation>Начальные веса</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tokenizer file</source>
        <translation>Файл токенизатора</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Data</source>
        <translation>Данные</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Training data</source>
        <translation>Обучающие данные</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Validation data</source>
        <translation>Валидационные данные</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Text field</source>
        <translation>Текстовое поле</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Sequence length</source>
        <translation>Длина последовательности</translation>
    </message>
    <message>
        <location line="-6"/>
        <source>Data format</source>
        <translation>Формат данных</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Train on</source>
        <translation>Обучать на</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Chat template file</source>
        <translation>Файл шаблона чата</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Long conversations</source>
        <translation>Длинные диалоги</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Pack conversations</source>
        <translation>Упаковывать диалоги</translation>
    </message>
    <message>
        <location line="-2"/>
        <source>Preprocessing</source>
        <translation>Предобработка</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Sequences start at</source>
        <translation>Начало последовательностей</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Validation split</source>
        <translation>Доля валидации</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Drop duplicate documents</source>
        <translation>Удалять дубликаты документов</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Token cache folder</source>
        <translation>Папка кэша токенов</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tokenizer threads</source>
        <translation>Потоки токенизатора</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Optimizer</source>
        <translation>Оптимизатор</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Learning rate</source>
        <translation>Скорость обучения</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Weight decay</source>
        <translation>Затухание весов</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Adam beta1</source>
        <translation>Adam beta1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Adam beta2</source>
        <translation>Adam beta2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Adam epsilon</source>
        <translation>Adam epsilon</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Gradient clipping</source>
        <translation>Ограничение нормы градиента</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Schedule</source>
        <translation>Расписание</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Epochs</source>
        <translation>Эпохи</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Maximum steps</source>
        <translation>Максимум шагов</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Learning-rate schedule</source>
        <translation>Расписание скорости обучения</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Warmup steps</source>
        <translation>Шаги разогрева</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Warmup share</source>
        <translation>Доля разогрева</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Batch</source>
        <translation>Батч</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Micro batch per device</source>
        <translation>Микробатч на устройство</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Eval batch per device</source>
        <translation>Батч оценки на устройство</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Gradient accumulation</source>
        <translation>Накопление градиентов</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Precision and memory</source>
        <translation>Точность и память</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>bf16 mixed precision</source>
        <translation>Смешанная точность bf16</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Random seed</source>
        <translation>Зерно (seed)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Logging and checkpoints</source>
        <translation>Логирование и чекпойнты</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Log every</source>
        <translation>Логировать каждые</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Evaluate every</source>
        <translation>Оценивать каждые</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save a checkpoint every</source>
        <translation>Сохранять чекпойнт каждые</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Checkpoints kept</source>
        <translation>Сколько чекпойнтов хранить</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Resume from</source>
        <translation>Продолжить с</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Output folder</source>
        <translation>Папка результатов</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Overwrite the output folder</source>
        <translation>Перезаписывать папку результатов</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Gradient checkpointing</source>
        <translation>Пересчёт активаций</translation>
    </message>
    <message>
        <location line="-47"/>
        <source>Frozen base precision</source>
        <translation>Точность замороженной базы</translation>
    </message>
    <message>
        <location line="+48"/>
        <source>Profile steps</source>
        <translation>Профилировать шаги</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Report to</source>
        <translation>Отправлять метрики в</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>TensorBoard folder</source>
        <translation>Папка TensorBoard</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Method</source>
        <translation>Метод</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>What trains</source>
        <translation>Что обучается</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>LoRA</source>
        <translation>LoRA</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>LoRA rank</source>
        <translation>Ранг LoRA</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>LoRA alpha</source>
        <translation>LoRA alpha</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>LoRA dropout</source>
        <translation>LoRA dropout</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Target modules</source>
        <translation>Целевые модули</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Modules trained in full</source>
        <translation>Полностью обучаемые модули</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Per-module ranks</source>
        <translation>Ранги по модулям</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Per-module alphas</source>
        <translation>Alpha по модулям</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Rank-stabilized LoRA</source>
        <translation>LoRA со стабилизацией ранга (rsLoRA)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>DoRA</source>
        <translation>DoRA</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>QLoRA</source>
        <translation>QLoRA</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>4-bit code</source>
        <translation>4-битный код</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Double quantization</source>
        <translation>Двойная квантизация</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Compute dtype</source>
        <translation>Тип вычислений</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Evaluation</source>
        <translation>Оценка</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Eval metric</source>
        <translation>Метрика оценки</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Target value</source>
        <translation>Целевое значение</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop at the target</source>
        <translation>Остановиться при достижении цели</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Evaluation tasks</source>
        <translation>Задачи оценки</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Parallelism</source>
        <translation>Параллелизм</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Collectives backend</source>
        <translation>Бэкенд коллективных операций</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Gradient bucket size</source>
        <translation>Размер корзины градиентов</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stall timeout</source>
        <translation>Таймаут зависания</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Sharding</source>
        <translation>Шардирование</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Prefetch next unit</source>
        <translation>Предзагрузка следующего блока</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>MLPerf submission</source>
        <translation>Заявка MLPerf</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>MLPerf benchmark</source>
        <translation>Бенчмарк MLPerf</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Organization</source>
        <translation>Организация</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Platform</source>
        <translation>Платформа</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Division</source>
        <translation>Дивизион</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Availability</source>
        <translation>Доступность</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Nodes and GPUs</source>
        <translation>Узлы и GPU</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Nodes</source>
        <translation>Узлы</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>GPUs per node</source>
        <translation>GPU на узел</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>GPU model</source>
        <translation>Модель GPU</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tasks per node</source>
        <translation>Задач на узел</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>CPUs per task</source>
        <translation>CPU на задачу</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Scheduling</source>
        <translation>Планирование</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Time limit</source>
        <translation>Лимит времени</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Partition</source>
        <translation>Раздел</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Account</source>
        <translation>Счёт</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Quality of service</source>
        <translation>Качество обслуживания (QoS)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Whole nodes only</source>
        <translation>Только узлы целиком</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Container (pyxis)</source>
        <translation>Контейнер (pyxis)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Container image</source>
        <translation>Образ контейнера</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Container mounts</source>
        <translation>Монтирования контейнера</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Working folder in the container</source>
        <translation>Рабочая папка в контейнере</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>More #SBATCH directives</source>
        <translation>Другие директивы #SBATCH</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Image</source>
        <translation>Образ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>NGC base image</source>
        <translation>Базовый образ NGC</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>apt packages</source>
        <translation>Пакеты apt</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>pip packages</source>
        <translation>Пакеты pip</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Environment variables</source>
        <translation>Переменные окружения</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Build the engine in the image</source>
        <translation>Собирать движок в образе</translation>
    </message>
</context>
<context>
    <name>RunConfigFieldHelp</name>
    <message>
        <location line="+94"/>
        <source>Seconds before the time limit at which Slurm signals the job (#SBATCH --signal=B:USR1@N): the engine finishes its step and saves a checkpoint. 0 sends no early signal.</source>
        <translation>За сколько секунд до лимита времени Slurm подаёт задаче сигнал (#SBATCH --signal=B:USR1@N): движок доводит шаг до конца и сохраняет контрольную точку. 0 — без раннего сигнала.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>#SBATCH --requeue: a job stopped by its time limit (after the early signal&apos;s checkpoint) or preempted goes back to the queue and resumes from its newest checkpoint at the same data position.</source>
        <translation>#SBATCH --requeue: задача, остановленная лимитом времени (после контрольной точки по раннему сигналу) или вытесненная, возвращается в очередь и продолжает с новейшей контрольной точки с той же позиции в данных.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>How many times an auto_requeue job requeues itself after its time limit&apos;s signal.</source>
        <translation>Сколько раз задача с auto_requeue сама возвращается в очередь после сигнала о лимите времени.</translation>
    </message>
    <message>
        <location line="-92"/>
        <source>Schema tag of this document.</source>
        <translation>Метка схемы этого документа.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run name: the Slurm job name and the run&apos;s name in the history.</source>
        <translation>Имя запуска: имя задачи Slurm и имя запуска в истории.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Free text: where this config comes from, what it is for.</source>
        <translation>Произвольный текст: откуда эта конфигурация и для чего она.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Hugging Face model folder (config.json + *.safetensors, optionally sharded with an index).</source>
        <translation>Папка модели Hugging Face (config.json + *.safetensors, возможно, разбитые на шарды с индексом).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Storage dtype of the base weights (HF --torch_dtype).</source>
        <translation>Тип хранения базовых весов (HF --torch_dtype).</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>pretrained: load the weights in path; random: only path/config.json is read and the weights start from HF&apos;s random init with training.seed (training from scratch, e.g. the demo).</source>
        <translation>pretrained: загрузить веса из path; random: читается только path/config.json, а веса инициализируются случайно, как в HF, с training.seed (обучение с нуля, например демо).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>tokenizer.json; empty means &lt;model.path&gt;/tokenizer.json.</source>
        <translation>tokenizer.json; пусто — &lt;model.path&gt;/tokenizer.json.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Training data: JSONL, one JSON object a line.</source>
        <translation>Обучающие данные: JSONL, один объект JSON на строку.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Validation data (JSONL); empty means split validation_split_percentage off train_file.</source>
        <translation>Валидационные данные (JSONL); пусто — отделить validation_split_percentage от train_file.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Field of each JSONL object that holds the text.</source>
        <translation>Поле объекта JSONL, в котором лежит текст.</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Tokens per training sequence.</source>
        <translation>Токенов в обучающей последовательности.</translation>
    </message>
    <message>
        <location line="-5"/>
        <source>What a line holds: text (text_field, every token trained), messages ({role, content} turns), sharegpt ({from, value} turns), alpaca (instruction/input/output); auto tells it from the first line. Conversations are rendered with the model&apos;s chat template.</source>
        <translation>Что содержит строка: text (поле text_field, обучаются все токены), messages (реплики {role, content}), sharegpt (реплики {from, value}), alpaca (instruction/input/output); auto определяет формат по первой строке. Диалоги оформляются шаблоном чата модели.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Conversations: which tokens are trained: assistant (every assistant turn through its end-of-turn marker), all, or last_assistant.</source>
        <translation>Диалоги: какие токены обучаются: assistant (каждая реплика ассистента вместе с маркером конца реплики), all (все) или last_assistant (последняя реплика ассистента).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Conversations: a Jinja chat template file; empty means the model&apos;s (tokenizer_config.json or chat_template.jinja).</source>
        <translation>Диалоги: файл шаблона чата Jinja; пусто — шаблон модели (tokenizer_config.json или chat_template.jinja).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Conversations longer than block_size: drop (counted), truncate_right (keep the start) or truncate_left (keep the end).</source>
        <translation>Диалоги длиннее block_size: drop (отбросить, с подсчётом), truncate_right (оставить начало) или truncate_left (оставить конец).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Conversations: pack several into each block (attention and positions restart at each one, so none sees another); off: one conversation a block, each batch cut to its longest.</source>
        <translation>Диалоги: упаковывать несколько в один блок (внимание и позиции начинаются заново в каждом, так что ни один не видит другой); выключено: один диалог на блок, каждый батч обрезается по самому длинному.</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Where a block may start: document (a document start), paragraph (a document or paragraph start), concat (anywhere, like HF group_texts).</source>
        <translation>Где может начинаться блок: document (в начале документа), paragraph (в начале документа или абзаца), concat (где угодно, как HF group_texts).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Percent of train_file documents held out for validation when validation_file is empty.</source>
        <translation>Процент документов train_file, отложенных для валидации, если validation_file пуст.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Drop exact duplicate documents (normalized text hash).</source>
        <translation>Удалять точные дубликаты документов (по хешу нормализованного текста).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Token cache folder; empty means &lt;training.output_dir&gt;/cache.</source>
        <translation>Папка кэша токенов; пусто — &lt;training.output_dir&gt;/cache.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tokenizer threads; 0 means all cores.</source>
        <translation>Потоки токенизатора; 0 — все ядра.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Peak learning rate of AdamW.</source>
        <translation>Пиковая скорость обучения AdamW.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Decoupled weight decay (not applied to biases and norms).</source>
        <translation>Раздельное затухание весов (не применяется к смещениям и нормализациям).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>AdamW beta1.</source>
        <translation>beta1 для AdamW.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>AdamW beta2.</source>
        <translation>beta2 для AdamW.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>AdamW epsilon.</source>
        <translation>epsilon для AdamW.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Gradient clipping by global norm; 0 disables it.</source>
        <translation>Ограничение градиента по глобальной норме; 0 — выключено.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Epochs over the training blocks (ignored with max_steps).</source>
        <translation>Эпохи по обучающим блокам (не учитываются, если задан max_steps).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Optimizer steps; null means num_train_epochs decides.</source>
        <translation>Шаги оптимизатора; null — определяется num_train_epochs.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Learning-rate schedule, as HF get_scheduler.</source>
        <translation>Расписание скорости обучения, как в HF get_scheduler.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Linear warmup steps (use this or warmup_ratio).</source>
        <translation>Шаги линейного разогрева (это поле или warmup_ratio).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Warmup as a share of all steps (use this or warmup_steps).</source>
        <translation>Разогрев как доля всех шагов (это поле или warmup_steps).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Sequences per rank per micro-step.</source>
        <translation>Последовательностей на процесс за микрошаг.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Sequences per rank per eval step.</source>
        <translation>Последовательностей на процесс за шаг оценки.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Micro-steps per optimizer step.</source>
        <translation>Микрошагов на шаг оптимизатора.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>bf16 autocast with fp32 master weights.</source>
        <translation>bf16 autocast с мастер-весами в fp32.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Seed of initialization, dropout and data order.</source>
        <translation>Зерно для инициализации, dropout и порядка данных.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Log train_loss, lr and throughput every N steps.</source>
        <translation>Записывать train_loss, lr и пропускную способность каждые N шагов.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Evaluate every N steps; null means only at the end.</source>
        <translation>Оценивать каждые N шагов; null — только в конце.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save a checkpoint every N steps (and at the end).</source>
        <translation>Сохранять чекпойнт каждые N шагов (и в конце).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Keep at most N checkpoints; null keeps all.</source>
        <translation>Хранить не более N чекпойнтов; null — хранить все.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Checkpoint folder to resume from, or &quot;latest&quot; in output_dir; empty starts fresh.</source>
        <translation>Папка чекпойнта, с которого продолжить, или &quot;latest&quot; в output_dir; пусто — начать заново.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Where checkpoints, the adapter or model, and mllog.txt go.</source>
        <translation>Куда пишутся чекпойнты, адаптер или модель и mllog.txt.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Allow a non-empty output_dir to be overwritten.</source>
        <translation>Разрешить перезапись непустой output_dir.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Recompute activations in backward to save memory.</source>
        <translation>Пересчитывать активации при обратном проходе, чтобы экономить память.</translation>
    </message>
    <message>
        <location line="-40"/>
        <source>dtype of the frozen base weights while training LoRA: auto is bfloat16 on GPUs with training.bf16 (half the weight memory, no cast per step; LoRA weights and optimizer stay fp32) and float32 elsewhere; float32 keeps every product as exact as an fp32 run.</source>
        <translation>Тип весов замороженной базы при обучении LoRA: auto — bfloat16 на GPU при training.bf16 (вдвое меньше памяти на веса, без приведения типов на каждом шаге; веса LoRA и оптимизатор остаются в fp32), иначе float32; float32 сохраняет каждое произведение таким же точным, как в fp32-запуске.</translation>
    </message>
    <message>
        <location line="+41"/>
        <source>A:B profiles optimizer steps A to B (1-based, inclusive): &lt;output_dir&gt;/profile/trace.json (a Chrome trace for Perfetto; GPU kernels through Kineto where the build has it) and a table of ms per step by category. Empty: off.</source>
        <translation>A:B профилирует шаги оптимизатора с A по B (с 1, включительно): &lt;output_dir&gt;/profile/trace.json (трасса Chrome для Perfetto; ядра GPU через Kineto, где сборка его имеет) и таблица мс на шаг по категориям. Пусто: выключено.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Trackers the engine also writes the run&apos;s metrics to, as HF&apos;s --report_to: tensorboard (event files in logging_dir), mlflow (an MLflow file store run in &lt;output_dir&gt;/mlruns), all (every tracker the engine writes), none. The MLLOG lines are always written.</source>
        <translation>Трекеры, в которые движок тоже пишет метрики запуска, как --report_to в HF: tensorboard (файлы событий в logging_dir), mlflow (запуск MLflow в файловом хранилище &lt;output_dir&gt;/mlruns), all (все трекеры, которые пишет движок), none. Строки MLLOG пишутся всегда.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>TensorBoard&apos;s folder for this run; empty means &lt;output_dir&gt;/runs/&lt;name&gt;, HF&apos;s layout.</source>
        <translation>Папка TensorBoard для этого запуска; пусто — &lt;output_dir&gt;/runs/&lt;name&gt;, как в HF.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>What trains: lora (PEFT LoRA adapters), qlora (LoRA adapters on a base whose linear weights are stored as 4-bit NF4, bitsandbytes&apos; format), embeddings (only embed_tokens and lm_head, the seeds&apos; ruadapt step), full (every weight).</source>
        <translation>Что обучается: lora (адаптеры PEFT LoRA), qlora (адаптеры LoRA на базовой модели, линейные веса которой хранятся в 4-битном NF4, формат bitsandbytes), embeddings (только embed_tokens и lm_head, шаг ruadapt), full (все веса).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>LoRA rank.</source>
        <translation>Ранг LoRA.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>LoRA alpha: the update is scaled by alpha / r.</source>
        <translation>LoRA alpha: обновление масштабируется на alpha / r.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Dropout on the LoRA input.</source>
        <translation>Dropout на входе LoRA.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Module names that get LoRA adapters (q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj).</source>
        <translation>Имена модулей, получающих адаптеры LoRA (q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Modules trained in full next to the adapters and saved with them (e.g. embed_tokens, lm_head).</source>
        <translation>Модули, которые обучаются полностью вместе с адаптерами и сохраняются с ними (например, embed_tokens, lm_head).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Per-module rank overrides: name pattern -&gt; r.</source>
        <translation>Ранги для отдельных модулей: шаблон имени -&gt; r.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Per-module alpha overrides: name pattern -&gt; alpha.</source>
        <translation>Alpha для отдельных модулей: шаблон имени -&gt; alpha.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Rank-stabilized LoRA: scale by alpha / sqrt(r).</source>
        <translation>LoRA со стабилизацией ранга: масштаб alpha / sqrt(r).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Weight-decomposed LoRA (DoRA).</source>
        <translation>LoRA с разложением весов (DoRA).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>QLoRA: the 4-bit code of the frozen weights (nf4, as bitsandbytes; fp4 is not supported).</source>
        <translation>QLoRA: 4-битный код замороженных весов (nf4, как в bitsandbytes; fp4 не поддерживается).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>QLoRA: quantize the block scales again (8 bits in blocks of 256): about 0.37 bits less per weight.</source>
        <translation>QLoRA: квантизовать и масштабы блоков (8 бит, блоками по 256): примерно на 0,37 бита меньше на вес.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>QLoRA: the dtype the 4-bit weights are dequantized to for each product (bfloat16 on GPUs; float32 is faster on CPUs).</source>
        <translation>QLoRA: тип, в который 4-битные веса распаковываются для каждого умножения (bfloat16 на GPU; на CPU быстрее float32).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>What eval_accuracy reports: loss (lower is better, as MLPerf llama2_70b_lora) or token_accuracy.</source>
        <translation>Что записывается в eval_accuracy: loss (чем меньше, тем лучше, как в MLPerf llama2_70b_lora) или token_accuracy.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Target of the metric (MLPerf llama2_70b_lora: 0.925); null = none.</source>
        <translation>Целевое значение метрики (MLPerf llama2_70b_lora: 0.925); null — без цели.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop the run with success once the target is reached.</source>
        <translation>Успешно завершить запуск, как только цель достигнута.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Task file (slipway.eval/1: multiple choice, generation, perplexity; engine/eval/README.md) run on rank 0 at every evaluation; each metric is logged as eval_task. Empty = none.</source>
        <translation>Файл задач (slipway.eval/1: выбор ответа, генерация, перплексия; engine/eval/README.md), который ранг 0 запускает при каждой оценке; каждая метрика пишется в журнал как eval_task. Пусто = нет.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Collectives: auto (NCCL on GPUs, Gloo on CPUs), nccl, gloo.</source>
        <translation>Коллективные операции: auto (NCCL на GPU, Gloo на CPU), nccl, gloo.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Gradient bucket size in MiB (DDP&apos;s bucket_cap_mb).</source>
        <translation>Размер корзины градиентов в МиБ (bucket_cap_mb в DDP).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Seconds a rendezvous or collective may stall before every rank exits with an error.</source>
        <translation>Сколько секунд рандеву или коллективная операция может стоять, прежде чем все процессы завершатся с ошибкой.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>none: every rank holds the whole model (DDP); full: weights, gradients and optimizer state are split over the ranks, each decoder layer gathered only while it computes (FSDP full_shard, ZeRO-3), for models that do not fit on one device.</source>
        <translation>none: каждый процесс держит всю модель (DDP); full: веса, градиенты и состояние оптимизатора распределены по процессам, каждый слой декодера собирается только на время вычисления (FSDP full_shard, ZeRO-3) — для моделей, которые не помещаются на одно устройство.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>With sharding full: gather the next unit while the current one computes (two units in memory). auto: on with NCCL, off with Gloo (on CPUs the transfer competes with the computation for cores).</source>
        <translation>При sharding full: собирать следующий блок, пока вычисляется текущий (в памяти два блока). auto: включено с NCCL, выключено с Gloo (на CPU передача конкурирует с вычислениями за ядра).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>MLPerf Training benchmark this run is a submission of; empty means no MLPerf logging. Set, the MLLOG carries every key the mlcommons compliance checker (training 4.0.0) requires.</source>
        <translation>Бенчмарк MLPerf Training, для которого этот запуск — заявка; пусто — без логирования MLPerf. Если задан, MLLOG содержит все ключи, которые требует mlcommons compliance checker (training 4.0.0).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>submission_org: the organization that submits the result.</source>
        <translation>submission_org: организация, подающая результат.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>submission_platform: the system the run is on, e.g. 1xDGX-H100 (as in the system description).</source>
        <translation>submission_platform: система, на которой идёт запуск, например 1xDGX-H100 (как в описании системы).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>submission_division: closed (the reference model, optimizer and hyperparameter rules) or open.</source>
        <translation>submission_division: closed (эталонная модель, оптимизатор и правила для гиперпараметров) или open.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>submission_status: onprem (available on premises), cloud, preview or research.</source>
        <translation>submission_status: onprem (доступно локально), cloud, preview или research.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>#SBATCH --nodes.</source>
        <translation>#SBATCH --nodes.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>#SBATCH --gres=gpu:N; 0 trains on CPUs.</source>
        <translation>#SBATCH --gres=gpu:N; 0 — обучение на CPU.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>GPU model of the nodes: the planner reads its memory and peak FLOP/s from it (slipway-engine plan).</source>
        <translation>Модель GPU на узлах: по ней планировщик берёт объём памяти и пиковые FLOP/s (slipway-engine plan).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Ranks per node; null means one per GPU (1 without GPUs).</source>
        <translation>Процессов на узел; null — по одному на GPU (1 без GPU).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>#SBATCH --cpus-per-task; null leaves it to Slurm.</source>
        <translation>#SBATCH --cpus-per-task; null — на усмотрение Slurm.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>#SBATCH --time: minutes, [D-]HH:MM[:SS] or MM:SS (e.g. 4-23:59:59).</source>
        <translation>#SBATCH --time: минуты, [D-]HH:MM[:SS] или MM:SS (например, 4-23:59:59).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>#SBATCH --partition; empty = the cluster&apos;s default.</source>
        <translation>#SBATCH --partition; пусто — раздел кластера по умолчанию.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>#SBATCH --account; empty = none.</source>
        <translation>#SBATCH --account; пусто — не задан.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>#SBATCH --qos; empty = none.</source>
        <translation>#SBATCH --qos; пусто — не задан.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>#SBATCH --exclusive.</source>
        <translation>#SBATCH --exclusive.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Image for pyxis srun --container-image (an enroot .sqsh or a registry image); empty = bare srun.</source>
        <translation>Образ для pyxis srun --container-image (файл enroot .sqsh или образ из реестра); пусто — srun без контейнера.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>srun --container-mounts entries, &quot;src:dst[:flags]&quot;.</source>
        <translation>Записи srun --container-mounts, &quot;src:dst[:flags]&quot;.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>srun --container-workdir.</source>
        <translation>srun --container-workdir.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Further #SBATCH directives, each &quot;--key=value&quot; or &quot;--flag&quot;, of these options: --constraint, --exclude, --nodelist, --reservation, --switches, --licenses, --network, --contiguous, --mem, --mem-per-cpu, --mem-per-gpu, --tmp, --gpu-bind, --gpu-freq, --cpu-freq, --hint, --distribution, --mem-bind, --sockets-per-node, --cores-per-socket, --threads-per-core, --spread-job, --use-min-nodes, --begin, --deadline, --dependency, --kill-on-invalid-dep, --hold, --time-min, --nice, --priority, --comment, --wckey, --mail-type, --mail-user.</source>
        <translation>Другие директивы #SBATCH, каждая в виде &quot;--key=value&quot; или &quot;--flag&quot;, из этих опций: --constraint, --exclude, --nodelist, --reservation, --switches, --licenses, --network, --contiguous, --mem, --mem-per-cpu, --mem-per-gpu, --tmp, --gpu-bind, --gpu-freq, --cpu-freq, --hint, --distribution, --mem-bind, --sockets-per-node, --cores-per-socket, --threads-per-core, --spread-job, --use-min-nodes, --begin, --deadline, --dependency, --kill-on-invalid-dep, --hold, --time-min, --nice, --priority, --comment, --wckey, --mail-type, --mail-user.</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>NGC PyTorch base image of the Dockerfile (torch is never reinstalled).</source>
        <translation>Базовый образ NGC PyTorch для Dockerfile (torch никогда не переустанавливается).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Debian/Ubuntu packages added to the image.</source>
        <translation>Пакеты Debian/Ubuntu, добавляемые в образ.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>pip packages added to the image, pinned as name==version.</source>
        <translation>Пакеты pip, добавляемые в образ, с закреплённой версией name==version.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Environment variables set in the image (no secrets).</source>
        <translation>Переменные окружения, задаваемые в образе (без секретов).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Build slipway-engine inside the image against its torch.</source>
        <translation>Собрать slipway-engine внутри образа с его собственным torch.</translation>
    </message>
</context>
<context>
    <name>RunState</name>
    <message>
        <location filename="../../app/core/run_state.cpp" line="+23"/>
        <source>submitting</source>
        <translation>отправляется</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>pending</source>
        <translation>в очереди</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>running</source>
        <translation>выполняется</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>stalled</source>
        <translation>завис</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>completed</source>
        <translation>завершён</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>failed</source>
        <translation>сбой</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>cancelled</source>
        <translation>отменён</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>timed out</source>
        <translation>истекло время</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>incomplete</source>
        <translation>не завершён</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>interrupted</source>
        <translation>прерван</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>unknown</source>
        <translation>неизвестно</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>reading</source>
        <translation>читается</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>following</source>
        <translation>отслеживается</translation>
    </message>
    <message>
        <location line="+79"/>
        <source>run_stop status %1</source>
        <translation>статус run_stop: %1</translation>
    </message>
    <message>
        <location line="+56"/>
        <source>slipway was closed while it ran</source>
        <translation>slipway закрыли, пока запуск шёл</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the process that ran it ended without saying how it ended</source>
        <translation>процесс, который его запускал, завершился, не сообщив, чем закончился запуск</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>cluster profile removed during submission</source>
        <translation>профиль кластера удалён во время отправки</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>cluster profile removed; no longer followed</source>
        <translation>профиль кластера удалён; запуск больше не отслеживается</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>stopped by SIGTERM from another process</source>
        <translation>остановлен сигналом SIGTERM из другого процесса</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>submission interrupted</source>
        <translation>отправка прервана</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>stopped</source>
        <translation>остановлен</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Slurm no longer knows the job; its log&apos;s run_stop: %1</source>
        <translation>Slurm больше не знает задачу; run_stop в её журнале: %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>finished (status success)</source>
        <translation>завершён (статус success)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>stopped with status %1</source>
        <translation>остановлен со статусом %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>reached its target: eval_accuracy %1 (target %2)</source>
        <translation>достиг цели: eval_accuracy %1 (цель %2)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>finished (exit code 0)</source>
        <translation>завершён (код выхода 0)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>failed with exit code %1</source>
        <translation>завершился с ошибкой: код выхода %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>stalled: no new step for %1 s (median step interval %2 ms)</source>
        <translation>завис: нет нового шага %1 с (медианный интервал шага %2 мс)</translation>
    </message>
    <message>
        <location line="-18"/>
        <source>the cluster profile changed during submission; see the cluster</source>
        <translation>профиль кластера изменился во время отправки; проверьте кластер</translation>
    </message>
</context>
<context>
    <name>slipway::app::AdaptPage</name>
    <message>
        <location filename="../../app/adapt/adapt_page.cpp" line="+110"/>
        <location line="+2"/>
        <location line="+3"/>
        <location line="+4"/>
        <source>as the preset (%1)</source>
        <translation>как в пресете (%1)</translation>
    </message>
    <message>
        <location line="-8"/>
        <source>Nodes</source>
        <translation>Узлы</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>GPUs per node</source>
        <translation>GPU на узел</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Time limit</source>
        <translation>Лимит времени</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Container image</source>
        <translation>Образ контейнера</translation>
    </message>
    <message>
        <location line="-2"/>
        <source>An image on the cluster (an enroot .sqsh file or a registry name); its mounts are the ones below, not the preset&apos;s</source>
        <translation>Образ на кластере (файл enroot .sqsh или имя в реестре); его точки монтирования указываются ниже, а не берутся из пресета</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>host:container, ...</source>
        <translation>хост:контейнер, ...</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Container mounts</source>
        <translation>Монтирования контейнера</translation>
    </message>
    <message>
        <location line="-10"/>
        <source>The training steps&apos; Slurm time limit; the other steps are short and keep an hour</source>
        <translation>Лимит времени Slurm для шагов обучения; остальные шаги короткие, им остаётся час</translation>
    </message>
    <message>
        <location line="+299"/>
        <source>Stopped: the pipeline was not submitted.</source>
        <translation>Остановлено: конвейер не отправлен.</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Submitting pipeline %1 to %2</source>
        <translation>Отправка конвейера %1 на %2</translation>
    </message>
    <message>
        <location line="-357"/>
        <source>Name</source>
        <translation>Название</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Base model</source>
        <translation>Базовая модель</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Instruct model</source>
        <translation>Инструктивная модель</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Corpus (JSONL)</source>
        <translation>Корпус (JSONL)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>New BPE tokenizer</source>
        <translation>Новый токенизатор BPE</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>New Unigram tokenizer</source>
        <translation>Новый токенизатор Unigram</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The base tokenizer extended</source>
        <translation>Расширенный токенизатор базовой модели</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tokenizer</source>
        <translation>Токенизатор</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Vocabulary size / tokens added</source>
        <translation>Размер словаря / новых токенов</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+6"/>
        <source>as the preset</source>
        <translation>как в пресете</translation>
    </message>
    <message>
        <location line="-5"/>
        <source>Block size</source>
        <translation>Длина блока</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+15"/>
        <source>one epoch</source>
        <translation>одна эпоха</translation>
    </message>
    <message>
        <location line="-14"/>
        <source>Embedding training steps</source>
        <translation>Шагов обучения эмбеддингов</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Embedding learning rate</source>
        <translation>Скорость обучения эмбеддингов</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>LEP method</source>
        <translation>Метод LEP</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Calibrate with a short LoRA run</source>
        <translation>Калибровка коротким запуском LoRA</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Calibration data</source>
        <translation>Данные калибровки</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>the corpus</source>
        <translation>корпус</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Calibration steps</source>
        <translation>Шагов калибровки</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Eval tasks</source>
        <translation>Задачи оценки</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>none</source>
        <translation>нет</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Run on</source>
        <translation>Где запускать</translation>
    </message>
    <message>
        <location line="+28"/>
        <source>Start</source>
        <translation>Запустить</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Save pipeline...</source>
        <translation>Сохранить конвейер...</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>The steps&apos; progress appears here once started.</source>
        <translation>Здесь появится ход шагов после запуска.</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>Save pipeline</source>
        <translation>Сохранить конвейер</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>This computer</source>
        <translation>Этот компьютер</translation>
    </message>
    <message numerus="yes">
        <location line="+48"/>
        <source>%n step(s), ready to start.</source>
        <translation>
            <numerusform>%n шаг, можно запускать.</numerusform>
            <numerusform>%n шага, можно запускать.</numerusform>
            <numerusform>%n шагов, можно запускать.</numerusform>
        </translation>
    </message>
    <message>
        <location line="+123"/>
        <location line="+39"/>
        <source>Finished.</source>
        <translation>Готово.</translation>
    </message>
    <message>
        <location line="-72"/>
        <source>Running pipeline %1 on This computer</source>
        <translation>Конвейер %1 выполняется на этом компьютере</translation>
    </message>
    <message>
        <location line="+33"/>
        <source>Stopped: the pipeline did not complete.</source>
        <translation>Остановлено: конвейер не завершён.</translation>
    </message>
    <message>
        <location line="-247"/>
        <source>Stop</source>
        <translation>Остановить</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stops the step running on This computer; the pipeline ends there</source>
        <translation>Останавливает шаг, идущий на этом компьютере; конвейер на нём заканчивается</translation>
    </message>
    <message>
        <location line="+168"/>
        <location line="+5"/>
        <source>Stopping...</source>
        <translation>Остановка...</translation>
    </message>
</context>
<context>
    <name>slipway::app::ChatPage</name>
    <message>
        <location filename="../../app/chat/chat_page.cpp" line="+36"/>
        <source>Export GGUF...</source>
        <translation>Экспорт в GGUF...</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>This model (LoRA merged) as one GGUF file for llama.cpp or Ollama</source>
        <translation>Эта модель (с влитым LoRA) одним файлом GGUF для llama.cpp или Ollama</translation>
    </message>
    <message>
        <location line="-6"/>
        <source>A completed run: a LoRA run talks through its base model with its adapter, a full run through its own model</source>
        <translation>Завершённый запуск: с LoRA-запуском разговор идёт через базовую модель с его адаптером, с полным — через его собственную модель</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Model folder...</source>
        <translation>Папка модели...</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>An HF model folder on this computer (config.json, *.safetensors, tokenizer.json)</source>
        <translation>Папка модели HF на этом компьютере (config.json, *.safetensors, tokenizer.json)</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>0: greedy (the most likely token every time)</source>
        <translation>0: жадный выбор (каждый раз самый вероятный токен)</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>System prompt (optional)</source>
        <translation>Системный промпт (необязательно)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Message (Ctrl+Return sends)</source>
        <translation>Сообщение (Ctrl+Enter — отправить)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Send</source>
        <translation>Отправить</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop</source>
        <translation>Остановить</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>End the reply: the generator process (on a cluster, its srun job) is ended</source>
        <translation>Прервать ответ: процесс генерации (на кластере — его задача srun) завершается</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>New conversation</source>
        <translation>Новый разговор</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Talk to:</source>
        <translation>Собеседник:</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Max new tokens</source>
        <translation>Макс. новых токенов</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Temperature</source>
        <translation>Температура</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>Model folder</source>
        <translation>Папка модели</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>Pick a completed run or a model folder.</source>
        <translation>Выберите завершённый запуск или папку модели.</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>(choose a run)</source>
        <translation>(выберите запуск)</translation>
    </message>
    <message>
        <location line="+49"/>
        <source>Model: %1</source>
        <translation>Модель: %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>; LoRA adapter: %1</source>
        <translation>; адаптер LoRA: %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source> (runs on %1)</source>
        <translation> (выполняется на: %1)</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Waiting for the model...</source>
        <translation>Ожидание модели...</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Generating...</source>
        <translation>Генерация...</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Stopped.</source>
        <translation>Остановлено.</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 tokens at %2 tokens/s (prompt %3 tokens; ended by %4)</source>
        <translation>Токенов: %1, %2 токенов/с (промпт: %3 токенов; завершено по: %4)</translation>
    </message>
    <message>
        <location line="+7"/>
        <source> — the model has no chat template: each message goes alone, as plain text</source>
        <translation> — у модели нет шаблона чата: каждое сообщение отправляется отдельно, как простой текст</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>No reply: %1</source>
        <translation>Нет ответа: %1</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Ready: the model loads with the first message.</source>
        <translation>Готово: модель загрузится с первым сообщением.</translation>
    </message>
    <message>
        <location line="+31"/>
        <source>You</source>
        <translation>Вы</translation>
    </message>
</context>
<context>
    <name>slipway::app::ChatSession</name>
    <message>
        <location filename="../../app/chat/chat_session.cpp" line="+76"/>
        <source>Generator started on %1; loading %2</source>
        <translation>Генерация запущена на: %1; загрузка %2</translation>
    </message>
    <message>
        <location line="+91"/>
        <source>Skipped a line that is not the generator&apos;s: %1</source>
        <translation>Пропущена строка, которую написал не генератор: %1</translation>
    </message>
    <message>
        <location line="+49"/>
        <source>%1 has no chat template: each message goes to it alone as plain text, without the conversation before it.</source>
        <translation>У %1 нет шаблона чата: каждое сообщение отправляется ей отдельно, как простой текст, без предыдущего разговора.</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>the generator ended (exit code %1) before the reply was complete</source>
        <translation>генератор завершился (код %1) до конца ответа</translation>
    </message>
</context>
<context>
    <name>slipway::app::ClusterJob</name>
    <message>
        <location filename="../../app/clusters/cluster_job.cpp" line="+35"/>
        <source>connecting to %1...</source>
        <translation>подключение к %1...</translation>
    </message>
</context>
<context>
    <name>slipway::app::ClusterWorker</name>
    <message>
        <location filename="../../app/clusters/cluster_session.cpp" line="+52"/>
        <source>connected to %1 (%2)</source>
        <translation>подключено к %1 (%2)</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>; sinfo failed: </source>
        <translation>; sinfo не выполнен: </translation>
    </message>
    <message>
        <location line="+22"/>
        <source>what the cluster offers could not be asked: </source>
        <translation>не удалось узнать, что есть на кластере: </translation>
    </message>
</context>
<context>
    <name>slipway::app::ClustersPage</name>
    <message>
        <location filename="../../app/clusters_page.cpp" line="+22"/>
        <source>Add...</source>
        <translation>Добавить...</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Edit...</source>
        <translation>Изменить...</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Remove</source>
        <translation>Удалить</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Test connection</source>
        <translation>Проверить подключение</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Partition</source>
        <translation>Раздел</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Nodes</source>
        <translation>Узлы</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Idle</source>
        <translation>Свободно</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>GPUs</source>
        <translation>GPU</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>GPU type</source>
        <translation>Тип GPU</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>&lt;b&gt;Clusters&lt;/b&gt;</source>
        <translation>&lt;b&gt;Кластеры&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Add cluster</source>
        <translation>Добавить кластер</translation>
    </message>
    <message>
        <location line="+9"/>
        <location line="+6"/>
        <source>Remove cluster</source>
        <translation>Удалить кластер</translation>
    </message>
    <message>
        <location line="-5"/>
        <source>Remove the profile %1? Runs on it stay in the history.</source>
        <translation>Удалить профиль %1? Его запуски останутся в истории.</translation>
    </message>
    <message>
        <location line="+91"/>
        <source>Edit cluster</source>
        <translation>Изменить кластер</translation>
    </message>
    <message>
        <location line="+78"/>
        <source>Connecting...</source>
        <translation>Подключение...</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>%1%2: %3 nodes, %4 idle</source>
        <translation>%1%2: узлов %3, свободно %4</translation>
    </message>
    <message>
        <location line="+1"/>
        <source> (default)</source>
        <translation> (по умолчанию)</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>, %1 GPUs %2</source>
        <translation>, %1 GPU %2</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>&lt;h3&gt;This computer&lt;/h3&gt;&lt;p&gt;The embedded default: runs &lt;code&gt;slipway-engine&lt;/code&gt; here, without SSH or Slurm. The run config&apos;s &lt;code&gt;slurm.ntasks_per_node&lt;/code&gt; sets the local ranks; inputs with relative paths are read from the resource folder, outputs go to the run&apos;s own folder.&lt;/p&gt;&lt;table cellspacing=6&gt;</source>
        <translation>&lt;h3&gt;Этот компьютер&lt;/h3&gt;&lt;p&gt;Встроенный профиль по умолчанию: &lt;code&gt;slipway-engine&lt;/code&gt; запускается здесь, без SSH и Slurm. Число локальных процессов задаёт &lt;code&gt;slurm.ntasks_per_node&lt;/code&gt; из конфигурации запуска; входные файлы с относительными путями читаются из папки ресурсов, результаты пишутся в собственную папку запуска.&lt;/p&gt;&lt;table cellspacing=6&gt;</translation>
    </message>
    <message>
        <location line="+6"/>
        <location line="+31"/>
        <source>Engine</source>
        <translation>Движок</translation>
    </message>
    <message>
        <location line="-30"/>
        <source>&lt;span style=&apos;color:#c62828&apos;&gt;not found next to slipway or on PATH: build it with SLIPWAY_BUILD_ENGINE=ON&lt;/span&gt;</source>
        <translation>&lt;span style=&apos;color:#c62828&apos;&gt;не найден ни рядом со slipway, ни в PATH: соберите его с SLIPWAY_BUILD_ENGINE=ON&lt;/span&gt;</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Command</source>
        <translation>Команда</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>CPU cores</source>
        <translation>Ядра CPU</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Resource folder</source>
        <translation>Папка ресурсов</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>not found</source>
        <translation>не найдено</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Runs folder</source>
        <translation>Папка запусков</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;p&gt;Add a cluster profile to submit to Slurm over SSH. Profiles live in &lt;code&gt;%1&lt;/code&gt;; secrets are never stored.&lt;/p&gt;</source>
        <translation>&lt;p&gt;Чтобы отправлять запуски в Slurm по SSH, добавьте профиль кластера. Профили хранятся в &lt;code&gt;%1&lt;/code&gt;; секреты никогда не сохраняются.&lt;/p&gt;</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Login node</source>
        <translation>Узел входа</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>User</source>
        <translation>Пользователь</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>(ssh config, else local)</source>
        <translation>(из ssh config, иначе локальный)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Key</source>
        <translation>Ключ</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Jump host</source>
        <translation>Промежуточный узел</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Remote folder</source>
        <translation>Папка на кластере</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Containers</source>
        <translation>Контейнеры</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Environment setup</source>
        <translation>Настройка окружения</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Default partition</source>
        <translation>Раздел по умолчанию</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Not tested yet: Test connection asks Slurm for its partitions.</source>
        <translation>Ещё не проверен: «Проверить подключение» запросит у Slurm список разделов.</translation>
    </message>
</context>
<context>
    <name>slipway::app::ContainerPanel</name>
    <message>
        <location filename="../../app/editor/container_panel.cpp" line="+21"/>
        <source>error</source>
        <translation>ошибка</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>warning</source>
        <translation>предупреждение</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>info</source>
        <translation>заметка</translation>
    </message>
    <message>
        <location line="+46"/>
        <source>Click a finding to select its line in the Dockerfile</source>
        <translation>Щёлкните замечание, чтобы выделить его строку в Dockerfile</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>The image&apos;s name:tag (lower case), as docker build -t and enroot import use it</source>
        <translation>Имя:тег образа (строчными буквами), как его используют docker build -t и enroot import</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Build image</source>
        <translation>Собрать образ</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Import to .sqsh</source>
        <translation>Импортировать в .sqsh</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>docker build and enroot import output streams here</source>
        <translation>Здесь появляется вывод docker build и enroot import</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Image:</source>
        <translation>Образ:</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>&lt;b&gt;Dockerfile&lt;/b&gt; (live; what Build image sends)</source>
        <translation>&lt;b&gt;Dockerfile&lt;/b&gt; (обновляется сразу; его отправит «Собрать образ»)</translation>
    </message>
    <message>
        <location line="+15"/>
        <source># Cannot render the Dockerfile:
# %1</source>
        <translation># Не удаётся построить Dockerfile:
# %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;b&gt;Linter&lt;/b&gt;: nothing to lint</source>
        <translation>&lt;b&gt;Линтер&lt;/b&gt;: проверять нечего</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>line %1</source>
        <translation>строка %1</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>&lt;b&gt;Linter&lt;/b&gt;: no findings (%1 rules checked)</source>
        <translation>&lt;b&gt;Линтер&lt;/b&gt;: замечаний нет (проверено правил: %1)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&lt;b&gt;Linter&lt;/b&gt;: %1 error(s), %2 warning(s), %3 note(s); click one to see its line</source>
        <translation>&lt;b&gt;Линтер&lt;/b&gt;: ошибок %1, предупреждений %2, заметок %3; щёлкните для перехода</translation>
    </message>
    <message>
        <location line="+41"/>
        <source>Build: %1</source>
        <translation>Сборка: %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Import: %1</source>
        <translation>Импорт: %1</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Running on the cluster...</source>
        <translation>Выполняется на кластере...</translation>
    </message>
</context>
<context>
    <name>slipway::app::DataPreviewPanel</name>
    <message>
        <location filename="../../app/editor/data_preview_panel.cpp" line="+44"/>
        <source>What the model learns from</source>
        <translation>На чём учится модель</translation>
    </message>
    <message>
        <location line="+32"/>
        <source>Set the training data to see what the model learns from.</source>
        <translation>Укажите обучающие данные, чтобы увидеть, на чём учится модель.</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>Bad lines</source>
        <translation>Плохие строки</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>&lt;b&gt;%1&lt;/b&gt; &amp;middot; %2: %3 kept, %4 tokens, %5% trained &amp;middot; %6 cut to the sequence length, %7 dropped &amp;middot; &lt;span style=&apos;%8&apos;&gt;%9 bad line(s)&lt;/span&gt;&lt;br&gt;&lt;span style=&apos;background:#c8f0d0&apos;&gt;&amp;nbsp;trained&amp;nbsp;&lt;/span&gt; &lt;span style=&apos;color:#888&apos;&gt;not trained&lt;/span&gt;, the number of tokens after each part</source>
        <translation>&lt;b&gt;%1&lt;/b&gt; &amp;middot; %2: оставлено %3, токенов %4, обучается %5% &amp;middot; обрезано до длины последовательности %6, отброшено %7 &amp;middot; &lt;span style=&apos;%8&apos;&gt;плохих строк: %9&lt;/span&gt;&lt;br&gt;&lt;span style=&apos;background:#c8f0d0&apos;&gt;&amp;nbsp;обучается&amp;nbsp;&lt;/span&gt; &lt;span style=&apos;color:#888&apos;&gt;не обучается&lt;/span&gt;, после каждой части — число её токенов</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Line %1: %2 tokens, %3 trained%4</source>
        <translation>Строка %1: токенов %2, обучается %3%4</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>, cut to the sequence length</source>
        <translation>, обрезана до длины последовательности</translation>
    </message>
    <message numerus="yes">
        <location line="-21"/>
        <source>all %n line(s) of the file</source>
        <translation>
            <numerusform>все %n строка файла</numerusform>
            <numerusform>все %n строки файла</numerusform>
            <numerusform>все %n строк файла</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>the first %n line(s)</source>
        <translation>
            <numerusform>первая %n строка</numerusform>
            <numerusform>первые %n строки</numerusform>
            <numerusform>первые %n строк</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>slipway::app::DoctorJob</name>
    <message>
        <location filename="../../app/clusters/doctor_job.cpp" line="+10"/>
        <source>Could not connect to %1: %2</source>
        <translation>Не удалось подключиться к %1: %2</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Cancelled: %1</source>
        <translation>Отменено: %1</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>The doctor failed: %1</source>
        <translation>Проверка не удалась: %1</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>The doctor job %1 ended %2 and no node reported.</source>
        <translation>Задача проверки %1 завершилась (%2), ни один узел не ответил.</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Every node ok (job %1).</source>
        <translation>Все узлы в порядке (задача %1).</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Slow or failed: %1 (job %2).</source>
        <translation>Медленные или неисправные: %1 (задача %2).</translation>
    </message>
</context>
<context>
    <name>slipway::app::EngineBuildJob</name>
    <message>
        <location filename="../../app/clusters/engine_build_job.cpp" line="+14"/>
        <source>Could not connect to %1: %2</source>
        <translation>Не удалось подключиться к %1: %2</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>The engine cannot be built: %1</source>
        <translation>Движок не удаётся собрать: %1</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>The engine is there already: %1</source>
        <translation>Движок уже собран: %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>building the engine in job %1 (log %2)</source>
        <translation>движок собирается в задаче %1 (журнал %2)</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>build job: %1</source>
        <translation>задача сборки: %1</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Engine built in %1 s: %2</source>
        <translation>Движок собран за %1 с: %2</translation>
    </message>
</context>
<context>
    <name>slipway::app::EnginePanel</name>
    <message>
        <location filename="../../app/clusters/engine_panel.cpp" line="+29"/>
        <source>the image file on the cluster (.sqsh or .sif)</source>
        <translation>файл образа на кластере (.sqsh или .sif)</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Empty: the profile&apos;s default partition, else Slurm&apos;s</source>
        <translation>Пусто: раздел по умолчанию из профиля, иначе раздел Slurm по умолчанию</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>The build compiles for the GPUs it finds on a node with them</source>
        <translation>Сборка компилирует под GPU, которые находит на узле с ними</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Build engine</source>
        <translation>Собрать движок</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Queues a one-task Slurm job that compiles slipway-engine in this environment, unless an engine of this version is there already</source>
        <translation>Ставит в очередь задачу Slurm из одного процесса, которая компилирует slipway-engine в этом окружении, если движка этой версии там ещё нет</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Cancel</source>
        <translation>Отмена</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cancels the build job (scancel).</source>
        <translation>Отменяет задачу сборки (scancel).</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Run the demo on this cluster</source>
        <translation>Запустить демо на этом кластере</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Submits the demo preset (a tiny model, about a minute) in this environment and plots it in the Monitor</source>
        <translation>Отправляет демо-пресет (крошечная модель, около минуты) в этом окружении и строит его графики в Мониторе</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Image</source>
        <translation>Образ</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Partition</source>
        <translation>Раздел</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>GPUs per node</source>
        <translation>GPU на узел</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>&lt;b&gt;Engine and first run&lt;/b&gt;</source>
        <translation>&lt;b&gt;Движок и первый запуск&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+25"/>
        <source>Runs on this cluster use an engine built there, in their own environment, once per environment. Build it now to see that it compiles, or let the first run build it.</source>
        <translation>Запуски на этом кластере используют движок, собранный там же, в их собственном окружении, один раз на окружение. Соберите его сейчас, чтобы убедиться, что он компилируется, или его соберёт первый запуск.</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Runs on this cluster use the engine its profile names (Edit... to build one on the cluster instead).</source>
        <translation>Запуски на этом кластере используют движок, указанный в профиле (Изменить..., чтобы собирать его на кластере).</translation>
    </message>
</context>
<context>
    <name>slipway::app::FieldEditor</name>
    <message>
        <location filename="../../app/editor/field_editor.cpp" line="+39"/>
        <source>, may be empty</source>
        <translation>, может быть пустым</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;br&gt;Script flag: &lt;code&gt;--%1&lt;/code&gt;</source>
        <translation>&lt;br&gt;Флаг скрипта: &lt;code&gt;--%1&lt;/code&gt;</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;br&gt;Range: %1</source>
        <translation>&lt;br&gt;Диапазон: %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;br&gt;Unit: %1</source>
        <translation>&lt;br&gt;Единица: %1</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>empty = unset</source>
        <translation>пусто = не задано</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>comma-separated</source>
        <translation>через запятую</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>JSON object, e.g. {&quot;name&quot;: value}</source>
        <translation>объект JSON, например {&quot;name&quot;: value}</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Browse...</source>
        <translation>Обзор...</translation>
    </message>
</context>
<context>
    <name>slipway::app::GgufExport</name>
    <message>
        <location filename="../../app/chat/gguf_export.cpp" line="+20"/>
        <source>slipway-engine export gguf failed (exit %1)</source>
        <translation>slipway-engine export gguf завершился с ошибкой (код %1)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>cannot start %1: %2</source>
        <translation>не удаётся запустить %1: %2</translation>
    </message>
</context>
<context>
    <name>slipway::app::HealthView</name>
    <message>
        <location filename="../../app/clusters/health_view.cpp" line="+43"/>
        <source>Slurm&apos;s default partition</source>
        <translation>раздел Slurm по умолчанию</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>every usable node of the partition (or: n01,n02)</source>
        <translation>все доступные узлы раздела (или: n01,n02)</translation>
    </message>
    <message>
        <location line="+3"/>
        <source> s</source>
        <translation> с</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>the job&apos;s time limit + 5 min</source>
        <translation>лимит времени задачи + 5 мин</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>A job still queued or running then is cancelled and judged on what it printed.</source>
        <translation>Задача, которая к этому моменту ещё в очереди или выполняется, отменяется и оценивается по тому, что успела вывести.</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the container image the checks run in</source>
        <translation>образ контейнера, в котором идут проверки</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run doctor</source>
        <translation>Запустить проверку</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>A short Slurm job checks each node: GPUs, bandwidth within and across nodes, the rendezvous port (slipway doctor).</source>
        <translation>Короткая задача Slurm проверяет каждый узел: GPU, пропускную способность внутри узла и между узлами, порт рандеву (slipway doctor).</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Cancel</source>
        <translation>Отмена</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cancels the doctor&apos;s Slurm job (scancel).</source>
        <translation>Отменяет задачу проверки в Slurm (scancel).</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Partition</source>
        <translation>Раздел</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Nodes</source>
        <translation>Узлы</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Deadline</source>
        <translation>Срок</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Image</source>
        <translation>Образ</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Node</source>
        <translation>Узел</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Verdict</source>
        <translation>Вердикт</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>busbw GB/s</source>
        <translation>busbw, ГБ/с</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Expected</source>
        <translation>Ожидается</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>GPUs</source>
        <translation>GPU</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Rendezvous</source>
        <translation>Рандеву</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Reasons</source>
        <translation>Причины</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>&lt;b&gt;Health&lt;/b&gt;</source>
        <translation>&lt;b&gt;Состояние узлов&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+36"/>
        <source>No health report yet. Run doctor (or &lt;code&gt;slipway doctor %1&lt;/code&gt;) checks every node (GPUs, bandwidth within and across nodes, the rendezvous port) and saves one here.</source>
        <translation>Отчёта о состоянии ещё нет. «Запустить проверку» (или &lt;code&gt;slipway doctor %1&lt;/code&gt;) проверяет каждый узел (GPU, пропускную способность внутри узла и между узлами, порт рандеву) и сохраняет отчёт здесь.</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Job %1 at %2, %3 x %4 ranks per node, expected busbw %5 GB/s within a node (%6). Across nodes: %7.</source>
        <translation>Задача %1, %2, %3 × %4 процессов на узел, ожидаемый busbw внутри узла %5 ГБ/с (%6). Между узлами: %7.</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>&lt;span style=&apos;color:#2e7d32&apos;&gt;Every node ok.&lt;/span&gt;</source>
        <translation>&lt;span style=&apos;color:#2e7d32&apos;&gt;Все узлы в порядке.&lt;/span&gt;</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&lt;span style=&apos;color:#c62828&apos;&gt;Exclude: %1&lt;/span&gt; (&lt;code&gt;slipway submit --exclude-bad&lt;/code&gt; leaves them out).</source>
        <translation>&lt;span style=&apos;color:#c62828&apos;&gt;Исключить: %1&lt;/span&gt; (&lt;code&gt;slipway submit --exclude-bad&lt;/code&gt; их не использует).</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Problem: %1</source>
        <translation>Проблема: %1</translation>
    </message>
</context>
<context>
    <name>slipway::app::HistoryWriter</name>
    <message>
        <location filename="../../app/runs/run_tracker.cpp" line="+180"/>
        <source>the run history %1 is written again</source>
        <translation>история запусков %1 снова записывается</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>the run history %1 is written again; the %2 points that waited are stored</source>
        <translation>история запусков %1 снова записывается; ожидавшие точки (%2) сохранены</translation>
    </message>
    <message>
        <location line="-11"/>
        <source>cannot write the run history %1: %2</source>
        <translation>не удаётся записать историю запусков %1: %2</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Points are kept and written when it works again.</source>
        <translation>Точки ждут в очереди и будут записаны, когда запись снова заработает.</translation>
    </message>
</context>
<context>
    <name>slipway::app::ImageJob</name>
    <message>
        <location filename="../../app/images/image_job.cpp" line="+9"/>
        <source>build</source>
        <translation>сборка</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>import</source>
        <translation>импорт</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The %1 did not start: %2</source>
        <translation>Не удалось начать (%1): %2</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>The %1 stopped: %2</source>
        <translation>Остановлено (%1): %2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The %1 failed (exit %2); its log on %3 is %4</source>
        <translation>Ошибка (%1, код выхода %2); журнал на %3: %4</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Built %1 on %2.</source>
        <translation>Образ %1 собран на %2.</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Imported %1 into %2 on %3.</source>
        <translation>Образ %1 импортирован в %2 на %3.</translation>
    </message>
</context>
<context>
    <name>slipway::app::LocalChatTransport</name>
    <message>
        <location filename="../../app/chat/chat_transport.cpp" line="+19"/>
        <source>cannot start %1: %2</source>
        <translation>не удаётся запустить %1: %2</translation>
    </message>
    <message>
        <location line="+50"/>
        <source>This computer</source>
        <translation>Этот компьютер</translation>
    </message>
</context>
<context>
    <name>slipway::app::MainWindow</name>
    <message>
        <location filename="../../app/main_window.cpp" line="+221"/>
        <source>GGUF written: %1</source>
        <translation>GGUF записан: %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>GGUF export failed: %1</source>
        <translation>Экспорт в GGUF не удался: %1</translation>
    </message>
    <message>
        <location line="+178"/>
        <location line="+6"/>
        <source>Export GGUF</source>
        <translation>Экспорт в GGUF</translation>
    </message>
    <message>
        <location line="-4"/>
        <source>GGUF models (*.gguf)</source>
        <translation>Модели GGUF (*.gguf)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Weights as (q8_0: 8-bit, about a quarter of f32; f16 / bf16: half; f32: exact)</source>
        <translation>Веса в формате (q8_0: 8 бит, около четверти f32; f16 / bf16: половина; f32: без потерь)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Exporting %1 as GGUF (%2)...</source>
        <translation>Экспорт %1 в GGUF (%2)...</translation>
    </message>
    <message>
        <location line="-274"/>
        <source>Runs</source>
        <translation>Запуски</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Editor</source>
        <translation>Редактор</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Monitor</source>
        <translation>Монитор</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Clusters</source>
        <translation>Кластеры</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Chat</source>
        <translation>Чат</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Adaptation</source>
        <translation>Адаптация</translation>
    </message>
    <message>
        <location line="+36"/>
        <source>Submit</source>
        <translation>Отправка</translation>
    </message>
    <message>
        <location line="+85"/>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>connection failed: %1</source>
        <translation>не удалось подключиться: %1</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Run the demo on %1</source>
        <translation>Запуск демо на %1</translation>
    </message>
    <message>
        <location line="-176"/>
        <source>Ready. File &gt; Open log... plots any MLLOG log; the editor submits runs.</source>
        <translation>Готово. «Файл &gt; Открыть журнал...» строит графики по любому журналу MLLOG; редактор отправляет запуски.</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run history unavailable: %1</source>
        <translation>История запусков недоступна: %1</translation>
    </message>
    <message>
        <location line="+195"/>
        <source>%1: connected (%2)</source>
        <translation>%1: подключено (%2)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1: connection lost, reconnecting: %2</source>
        <translation>%1: соединение потеряно, переподключение: %2</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Read %1: %2 points, %3 bad MLLOG lines</source>
        <translation>Прочитано: %1 (точек: %2, ошибочных строк MLLOG: %3)</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>&amp;File</source>
        <translation>&amp;Файл</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;New run</source>
        <translation>&amp;Новый запуск</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>&amp;Open run config...</source>
        <translation>&amp;Открыть конфигурацию запуска...</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Recent run configs</source>
        <translation>Недавние конфигурации</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Save run config as...</source>
        <translation>&amp;Сохранить конфигурацию как...</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&amp;Import training script...</source>
        <translation>&amp;Импортировать скрипт обучения...</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Open &amp;log...</source>
        <translation>Открыть &amp;журнал...</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Open log on a &amp;cluster...</source>
        <translation>Открыть журнал на &amp;кластере...</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Export plots as &amp;PNG...</source>
        <translation>Экспорт графиков в &amp;PNG...</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Export plots as &amp;CSV...</source>
        <translation>Экспорт графиков в &amp;CSV...</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&amp;Quit</source>
        <translation>&amp;Выход</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>&amp;Run</source>
        <translation>&amp;Запуск</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Submit</source>
        <translation>&amp;Отправить</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>The run config has problems; fix them first.</source>
        <translation>В конфигурации запуска есть ошибки; сначала исправьте их.</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>&amp;Cancel selected run</source>
        <translation>О&amp;тменить выбранный запуск</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>&amp;View</source>
        <translation>&amp;Вид</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Runs</source>
        <translation>&amp;Запуски</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>&amp;Editor</source>
        <translation>&amp;Редактор</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>&amp;Monitor</source>
        <translation>&amp;Монитор</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Clusters</source>
        <translation>&amp;Кластеры</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>C&amp;hat</source>
        <translation>&amp;Чат</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Lan&amp;guage adaptation</source>
        <translation>&amp;Адаптация к языку</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>&amp;Language</source>
        <translation>&amp;Язык</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Help</source>
        <translation>&amp;Справка</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;About Slipway</source>
        <translation>&amp;О Slipway</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>About Slipway</source>
        <translation>О Slipway</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&lt;b&gt;Slipway %1&lt;/b&gt;&lt;p&gt;Fine-tune LLMs on Slurm GPU clusters: run editor, live monitor, run history, and the slipway-engine trainer.&lt;/p&gt;</source>
        <translation>&lt;b&gt;Slipway %1&lt;/b&gt;&lt;p&gt;Дообучение LLM на GPU-кластерах со Slurm: редактор запусков, мониторинг в реальном времени, история запусков и тренер slipway-engine.&lt;/p&gt;</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Takes effect at the next start</source>
        <translation>Применяется при следующем запуске программы</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>The interface language changes at the next start of Slipway.</source>
        <translation>Язык интерфейса сменится при следующем запуске Slipway.</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>System</source>
        <translation>Как в системе</translation>
    </message>
    <message>
        <location line="+64"/>
        <source>Quit Slipway</source>
        <translation>Выход из Slipway</translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>%n run(s) still training on this computer. Quitting stops them (a checkpoint is saved). Quit anyway?</source>
        <translation>
            <numerusform>На этом компьютере ещё обучается %n запуск. Выход остановит его (чекпойнт будет сохранён). Всё равно выйти?</numerusform>
            <numerusform>На этом компьютере ещё обучаются %n запуска. Выход остановит их (чекпойнт будет сохранён). Всё равно выйти?</numerusform>
            <numerusform>На этом компьютере ещё обучаются %n запусков. Выход остановит их (чекпойнт будет сохранён). Всё равно выйти?</numerusform>
        </translation>
    </message>
    <message>
        <location line="+27"/>
        <location line="+39"/>
        <location line="+4"/>
        <source>Open run config</source>
        <translation>Открыть конфигурацию запуска</translation>
    </message>
    <message>
        <location line="-32"/>
        <source>Reading %1</source>
        <translation>Чтение %1</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Following %1</source>
        <translation>Отслеживание %1</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Opened %1</source>
        <translation>Открыт %1</translation>
    </message>
    <message>
        <location line="+5"/>
        <location line="+4"/>
        <source>Open log</source>
        <translation>Открыть журнал</translation>
    </message>
    <message>
        <location line="-3"/>
        <source>Logs (*.txt *.log *.out);;All files (*)</source>
        <translation>Журналы (*.txt *.log *.out);;Все файлы (*)</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Run configs (*.json);;All files (*)</source>
        <translation>Конфигурации запусков (*.json);;Все файлы (*)</translation>
    </message>
    <message>
        <location line="+9"/>
        <location line="+4"/>
        <source>Save run config</source>
        <translation>Сохранить конфигурацию запуска</translation>
    </message>
    <message>
        <location line="-3"/>
        <source>Run configs (*.json)</source>
        <translation>Конфигурации запусков (*.json)</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Saved %1</source>
        <translation>Сохранено: %1</translation>
    </message>
    <message>
        <location line="+4"/>
        <location line="+5"/>
        <source>Import training script</source>
        <translation>Импорт скрипта обучения</translation>
    </message>
    <message>
        <location line="-4"/>
        <source>Shell scripts (*.sh);;All files (*)</source>
        <translation>Скрипты shell (*.sh);;Все файлы (*)</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Imported</source>
        <translation>Импортировано</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Export plots as PNG</source>
        <translation>Экспорт графиков в PNG</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Export plots as CSV</source>
        <translation>Экспорт графиков в CSV</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>PNG images (*.png)</source>
        <translation>Изображения PNG (*.png)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>CSV files (*.csv)</source>
        <translation>Файлы CSV (*.csv)</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Wrote %1</source>
        <translation>Записано: %1</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Cancel: %1</source>
        <translation>Отмена: %1</translation>
    </message>
    <message numerus="yes">
        <location line="+28"/>
        <source>Comparing %n run(s)</source>
        <translation>
            <numerusform>Сравнивается %n запуск</numerusform>
            <numerusform>Сравниваются %n запуска</numerusform>
            <numerusform>Сравниваются %n запусков</numerusform>
        </translation>
    </message>
    <message>
        <location line="+11"/>
        <source>finished</source>
        <translation>завершён</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>failed</source>
        <translation>завершился с ошибкой</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>reached its target</source>
        <translation>достиг цели</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>stalled</source>
        <translation>завис</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Slipway: %1 %2</source>
        <translation>Slipway: %1 %2</translation>
    </message>
    <message>
        <location filename="../../app/main_window_remote.cpp" line="+77"/>
        <location line="+6"/>
        <location line="+7"/>
        <source>Open log on a cluster</source>
        <translation>Открыть журнал на кластере</translation>
    </message>
    <message>
        <location line="-12"/>
        <source>Add a cluster on the Clusters page first.</source>
        <translation>Сначала добавьте кластер на странице «Кластеры».</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Cluster:</source>
        <translation>Кластер:</translation>
    </message>
    <message>
        <location line="+38"/>
        <source>%1 %2 on %3...</source>
        <translation>%1 %2 на %3...</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Building</source>
        <translation>Сборка</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Importing</source>
        <translation>Импорт</translation>
    </message>
</context>
<context>
    <name>slipway::app::MetricPlot</name>
    <message>
        <location filename="../../app/monitor/metric_plot.cpp" line="+18"/>
        <location line="+29"/>
        <source>no %1 points</source>
        <translation>нет точек: %1</translation>
    </message>
    <message>
        <location line="-24"/>
        <source>samples</source>
        <translation>примеры</translation>
    </message>
    <message>
        <location line="+82"/>
        <source> (smoothed)</source>
        <translation> (сглажено)</translation>
    </message>
    <message>
        <location line="+103"/>
        <source>target %1</source>
        <translation>цель %1</translation>
    </message>
</context>
<context>
    <name>slipway::app::ModelPicker</name>
    <message>
        <location filename="../../app/editor/model_picker.cpp" line="+15"/>
        <source>Model</source>
        <translation>Модель</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>The linear modules of every layer that can get LoRA adapters</source>
        <translation>Линейные модули каждого слоя, к которым можно добавить адаптеры LoRA</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Use as LoRA targets</source>
        <translation>Использовать как цели LoRA</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Choose a local config.json...</source>
        <translation>Выбрать локальный config.json...</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>For a model folder on a cluster: a copy of its config.json on this computer</source>
        <translation>Для папки модели на кластере: копия её config.json на этом компьютере</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Close</source>
        <translation>Закрыть</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>LoRA target modules:</source>
        <translation>Целевые модули LoRA:</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>&lt;b&gt;No model facts&lt;/b&gt;&lt;br&gt;%1</source>
        <translation>&lt;b&gt;Нет сведений о модели&lt;/b&gt;&lt;br&gt;%1</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>&lt;table&gt;&lt;tr&gt;&lt;td&gt;Family:&amp;nbsp;&lt;/td&gt;&lt;td&gt;&lt;b&gt;%1&lt;/b&gt;&lt;/td&gt;&lt;/tr&gt;&lt;tr&gt;&lt;td&gt;Parameters:&amp;nbsp;&lt;/td&gt;&lt;td&gt;&lt;b&gt;%2&lt;/b&gt;&lt;/td&gt;&lt;/tr&gt;&lt;tr&gt;&lt;td&gt;Context:&amp;nbsp;&lt;/td&gt;&lt;td&gt;&lt;b&gt;%3 tokens&lt;/b&gt;&lt;/td&gt;&lt;/tr&gt;&lt;tr&gt;&lt;td&gt;Vocabulary:&amp;nbsp;&lt;/td&gt;&lt;td&gt;&lt;b&gt;%4 tokens&lt;/b&gt;&lt;/td&gt;&lt;/tr&gt;&lt;tr&gt;&lt;td&gt;Shape:&amp;nbsp;&lt;/td&gt;&lt;td&gt;%5 layers, hidden %6, MLP %7, %8 heads (%9 key/value)&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;&lt;br&gt;&lt;span style=&apos;color:#757575&apos;&gt;%10&lt;/span&gt;</source>
        <translation>&lt;table&gt;&lt;tr&gt;&lt;td&gt;Семейство:&amp;nbsp;&lt;/td&gt;&lt;td&gt;&lt;b&gt;%1&lt;/b&gt;&lt;/td&gt;&lt;/tr&gt;&lt;tr&gt;&lt;td&gt;Параметры:&amp;nbsp;&lt;/td&gt;&lt;td&gt;&lt;b&gt;%2&lt;/b&gt;&lt;/td&gt;&lt;/tr&gt;&lt;tr&gt;&lt;td&gt;Контекст:&amp;nbsp;&lt;/td&gt;&lt;td&gt;&lt;b&gt;%3 токенов&lt;/b&gt;&lt;/td&gt;&lt;/tr&gt;&lt;tr&gt;&lt;td&gt;Словарь:&amp;nbsp;&lt;/td&gt;&lt;td&gt;&lt;b&gt;%4 токенов&lt;/b&gt;&lt;/td&gt;&lt;/tr&gt;&lt;tr&gt;&lt;td&gt;Форма:&amp;nbsp;&lt;/td&gt;&lt;td&gt;слоёв %5, hidden %6, MLP %7, голов %8 (key/value: %9)&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;&lt;br&gt;&lt;span style=&apos;color:#757575&apos;&gt;%10&lt;/span&gt;</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>LoRA targets apply when the Adapter page trains lora</source>
        <translation>Цели LoRA применяются, когда на вкладке «Адаптер» выбрано обучение lora</translation>
    </message>
</context>
<context>
    <name>slipway::app::MonitorWidget</name>
    <message>
        <location filename="../../app/monitor/monitor_widget.cpp" line="+379"/>
        <source>nodes: %1</source>
        <translation>узлы: %1</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>node states: %1</source>
        <translation>состояние узлов: %1</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>heartbeats: %1</source>
        <translation>пульс узлов: %1</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>lost: %1</source>
        <translation>потеряны: %1</translation>
    </message>
    <message>
        <location line="-19"/>
        <source>restarts: %1</source>
        <translation>перезапусков: %1</translation>
    </message>
    <message>
        <location filename="../../app/core/run_metrics.cpp" line="+35"/>
        <source>train_loss</source>
        <translation>train_loss</translation>
    </message>
    <message>
        <location line="+2"/>
        <location line="+18"/>
        <source>eval_accuracy</source>
        <translation>eval_accuracy</translation>
    </message>
    <message>
        <location line="-16"/>
        <source>learning rate</source>
        <translation>скорость обучения</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>tokens/s</source>
        <translation>токенов/с</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>eval loss (MLPerf eval_accuracy)</source>
        <translation>потери на валидации (eval_accuracy по MLPerf)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>eval token accuracy</source>
        <translation>точность по токенам на валидации</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>samples</source>
        <translation>примеры</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>step</source>
        <translation>шаг</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>wall time (s)</source>
        <translation>время (с)</translation>
    </message>
    <message>
        <location filename="../../app/monitor/monitor_widget.cpp" line="-304"/>
        <source>What the curves are drawn against</source>
        <translation>По какой оси строятся кривые</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Exponential moving average weight; the raw curve stays faint behind</source>
        <translation>Вес экспоненциального скользящего среднего; исходная кривая остаётся бледной на фоне</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Log scale</source>
        <translation>Логарифмическая шкала</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Export PNG...</source>
        <translation>Экспорт PNG...</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Export CSV...</source>
        <translation>Экспорт CSV...</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Cancel run</source>
        <translation>Отменить запуск</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>X axis:</source>
        <translation>Ось X:</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Smoothing:</source>
        <translation>Сглаживание:</translation>
    </message>
    <message>
        <location line="+25"/>
        <source>eval task scores</source>
        <translation>задачи оценки: доли верных</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>eval task perplexity and NLL</source>
        <translation>задачи оценки: перплексия и NLL</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>Checked runs are overlaid; the selected one drives the status line and log</source>
        <translation>Отмеченные запуски накладываются друг на друга; выбранный определяет строку состояния и журнал</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Remove from the monitor</source>
        <translation>Убрать из монитора</translation>
    </message>
    <message>
        <location line="+9"/>
        <location line="+220"/>
        <source>No run. File &gt; Open log... or submit a run.</source>
        <translation>Нет запуска. «Файл &gt; Открыть журнал...» или отправьте запуск.</translation>
    </message>
    <message>
        <location line="-209"/>
        <source>Search the log (Enter: next, Shift+Enter: previous)</source>
        <translation>Поиск по журналу (Enter: следующее, Shift+Enter: предыдущее)</translation>
    </message>
    <message>
        <location line="+53"/>
        <location filename="../../app/monitor/monitor_widget_search.cpp" line="+59"/>
        <source>not found</source>
        <translation>не найдено</translation>
    </message>
    <message>
        <location filename="../../app/runs/runs_model.cpp" line="+354"/>
        <source>%1: %2</source>
        <translation>%1: %2</translation>
    </message>
    <message>
        <location filename="../../app/monitor/monitor_widget.cpp" line="+108"/>
        <source>[slipway] %1</source>
        <translation>[slipway] %1</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>[slipway] ... %1 lines not shown ...</source>
        <translation>[slipway] ... не показано строк: %1 ...</translation>
    </message>
    <message>
        <location line="+45"/>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>run_stop: %1</source>
        <translation>run_stop: %1</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>elapsed %1</source>
        <translation>прошло %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>step %1 / %2</source>
        <translation>шаг %1 / %2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>step %1</source>
        <translation>шаг %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>ETA %1</source>
        <translation>осталось ~%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>train_loss %1</source>
        <translation>train_loss %1</translation>
    </message>
    <message>
        <location line="+5"/>
        <source> (target %1)</source>
        <translation> (цель %1)</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 points</source>
        <translation>точек: %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>reading...</source>
        <translation>чтение...</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;span style=&quot;color:#c62828&quot;&gt;history not written, retrying&lt;/span&gt;</source>
        <translation>&lt;span style=&quot;color:#c62828&quot;&gt;история не записана, повторная попытка&lt;/span&gt;</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>[slipway] ... %1 earlier lines not kept ...</source>
        <translation>[slipway] ... более ранние строки не сохранены: %1 ...</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>[slipway] history: %1</source>
        <translation>[slipway] история: %1</translation>
    </message>
    <message>
        <location filename="../../app/monitor/monitor_widget_search.cpp" line="-21"/>
        <source>searching the whole log...</source>
        <translation>поиск по всему журналу...</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>[slipway] lines %1-%2 of the log file (clear the search to see its end)</source>
        <translation>[slipway] строки %1–%2 файла журнала (очистите поиск, чтобы увидеть конец)</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>line %1</source>
        <translation>строка %1</translation>
    </message>
    <message>
        <location filename="../../app/monitor/monitor_widget_plot.cpp" line="+175"/>
        <source>eval_accuracy (loss and accuracy mixed)</source>
        <translation>eval_accuracy (потери и точность вперемешку)</translation>
    </message>
</context>
<context>
    <name>slipway::app::PipelineJob</name>
    <message>
        <location filename="../../app/clusters/pipeline_job.cpp" line="+27"/>
        <source>Could not connect to %1: %2</source>
        <translation>Не удалось подключиться к %1: %2</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Run history: %1</source>
        <translation>История запусков: %1</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>No run history to record the pipeline&apos;s steps in</source>
        <translation>Нет истории запусков, куда записать шаги конвейера</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Stopped: %1</source>
        <translation>Остановлено: %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Submitting the pipeline failed: %1</source>
        <translation>Не удалось отправить конвейер: %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Pipeline %1 queued as %2 jobs in %3</source>
        <translation>Конвейер %1 поставлен в очередь: %2 заданий в %3</translation>
    </message>
</context>
<context>
    <name>slipway::app::PlanStrip</name>
    <message>
        <location filename="../../app/editor/plan_strip.cpp" line="+10"/>
        <location line="+33"/>
        <source>Choose a local config.json...</source>
        <translation>Выбрать локальный config.json...</translation>
    </message>
    <message>
        <location line="-31"/>
        <source>The model folder is on the cluster: plan with a copy of its config.json from this computer (slipway-engine plan --model-config)</source>
        <translation>Папка модели находится на кластере: для плана укажите копию её config.json на этом компьютере (slipway-engine plan --model-config)</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Details</source>
        <translation>Подробности</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The planner&apos;s breakdown of the peak, and its assumptions</source>
        <translation>Разбивка пикового потребления памяти и допущения планировщика</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>Another config.json...</source>
        <translation>Другой config.json...</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;b&gt;Plan&lt;/b&gt;: %1</source>
        <translation>&lt;b&gt;План&lt;/b&gt;: %1</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>
Model config: %1</source>
        <translation>
Конфигурация модели: %1</translation>
    </message>
</context>
<context>
    <name>slipway::app::PresetGallery</name>
    <message>
        <location filename="../../app/editor/preset_gallery.cpp" line="+27"/>
        <source>Use this preset</source>
        <translation>Использовать этот пресет</translation>
    </message>
    <message>
        <location line="+30"/>
        <source>Cannot be read: %1</source>
        <translation>Не удаётся прочитать: %1</translation>
    </message>
</context>
<context>
    <name>slipway::app::ProfileDialog</name>
    <message>
        <location filename="../../app/clusters/cluster_dialogs.cpp" line="-163"/>
        <source>Cluster profile</source>
        <translation>Профиль кластера</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>The profile&apos;s own name: letters, digits, &apos;.&apos;, &apos;_&apos; and &apos;-&apos;</source>
        <translation>Имя профиля: буквы, цифры, &apos;.&apos;, &apos;_&apos; и &apos;-&apos;</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Login node: host name, address, or a Host alias of ~/.ssh/config</source>
        <translation>Узел входа: имя узла, адрес или псевдоним Host из ~/.ssh/config</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>from ssh config, else 22</source>
        <translation>из ssh config, иначе 22</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Empty: ssh config&apos;s User, else your local user name</source>
        <translation>Пусто: User из ssh config, иначе ваше локальное имя пользователя</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Private key file; its passphrase is asked when needed and never stored</source>
        <translation>Файл закрытого ключа; пароль к нему запрашивается при необходимости и никогда не сохраняется</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>[user@]host[:port] of a jump host; empty = none</source>
        <translation>[user@]host[:port] промежуточного узла; пусто = без него</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Runs go to &lt;folder&gt;/runs/&lt;run-id&gt; on the cluster</source>
        <translation>Запуски размещаются в &lt;папка&gt;/runs/&lt;run-id&gt; на кластере</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Where a run&apos;s steps run: none: on the node, after the environment setup; pyxis: srun --container-image with the run&apos;s image; apptainer or singularity: exec in the run&apos;s image</source>
        <translation>Где выполняются шаги запуска: none — на узле, после настройки окружения; pyxis — srun --container-image с образом запуска; apptainer или singularity — exec в образе запуска</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>build: built on the cluster from this app&apos;s engine sources, in the run&apos;s image or environment, once per environment; image: the slipway-engine the image or environment carries; desktop: this computer&apos;s engine, uploaded (only for nodes like this computer)</source>
        <translation>build — собирается на кластере из исходников движка этого приложения, в образе или окружении запуска, один раз для каждого окружения; image — slipway-engine, который есть в образе или окружении; desktop — движок этого компьютера, загружается на кластер (только для узлов, таких же, как этот компьютер)</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Shell lines every job runs before its steps, one per line</source>
        <translation>Строки оболочки, которые каждое задание выполняет перед своими шагами, по одной на строку</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Used when the run config names no partition</source>
        <translation>Используется, если в конфигурации запуска раздел не указан</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Name</source>
        <translation>Имя</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Host</source>
        <translation>Узел</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Port</source>
        <translation>Порт</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>User</source>
        <translation>Пользователь</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Identity file</source>
        <translation>Файл ключа</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Jump host</source>
        <translation>Промежуточный узел</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Remote folder</source>
        <translation>Папка на кластере</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Containers</source>
        <translation>Контейнеры</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Engine</source>
        <translation>Движок</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Environment setup</source>
        <translation>Настройка окружения</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Default partition</source>
        <translation>Раздел по умолчанию</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Default account</source>
        <translation>Счёт по умолчанию</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Default QoS</source>
        <translation>QoS по умолчанию</translation>
    </message>
</context>
<context>
    <name>slipway::app::RemoteBrowser</name>
    <message>
        <location filename="../../app/clusters/remote_browser.cpp" line="+18"/>
        <source>Choose a folder on %1</source>
        <translation>Выберите папку на %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Choose a file on %1</source>
        <translation>Выберите файл на %1</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Up</source>
        <translation>Вверх</translation>
    </message>
    <message>
        <location line="+46"/>
        <source>Cannot list %1: %2</source>
        <translation>Не удаётся получить список %1: %2</translation>
    </message>
    <message numerus="yes">
        <location line="+7"/>
        <source>%n entries</source>
        <translation>
            <numerusform>%n элемент</numerusform>
            <numerusform>%n элемента</numerusform>
            <numerusform>%n элементов</numerusform>
        </translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Listing %1...</source>
        <translation>Получение списка %1...</translation>
    </message>
</context>
<context>
    <name>slipway::app::RemoteChatTransport</name>
    <message>
        <location filename="../../app/chat/remote_chat_transport.cpp" line="+30"/>
        <source>cluster %1 (srun)</source>
        <translation>кластер %1 (srun)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>the connection to %1 was replaced (its profile changed or was removed): choose the run again</source>
        <translation>соединение с %1 заменено (его профиль изменён или удалён): выберите запуск снова</translation>
    </message>
</context>
<context>
    <name>slipway::app::RunEditor</name>
    <message>
        <location filename="../../app/editor/run_editor.cpp" line="+56"/>
        <source>Run configs shipped in resources/presets and your own</source>
        <translation>Конфигурации из resources/presets и ваши собственные</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+12"/>
        <location line="+13"/>
        <source>Load preset</source>
        <translation>Загрузить пресет</translation>
    </message>
    <message>
        <location line="-24"/>
        <source>Gallery...</source>
        <translation>Галерея...</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Every preset with its description, model and machines</source>
        <translation>Все пресеты с описанием, моделью и машинами</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save as preset...</source>
        <translation>Сохранить как пресет...</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Preset:</source>
        <translation>Пресет:</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Start from a preset</source>
        <translation>Начать с пресета</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Save as preset</source>
        <translation>Сохранить как пресет</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Preset name:</source>
        <translation>Имя пресета:</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Save preset</source>
        <translation>Сохранить пресет</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Model &amp;&amp; data</source>
        <translation>Модель и данные</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Hyperparameters</source>
        <translation>Гиперпараметры</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Adapter</source>
        <translation>Адаптер</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Resources</source>
        <translation>Ресурсы</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>Container</source>
        <translation>Контейнер</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Model...</source>
        <translation>Модель...</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Family, parameters, context and vocabulary from config.json; LoRA targets</source>
        <translation>Семейство, параметры, контекст и словарь из config.json; цели LoRA</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>run.json exactly as it will be written:</source>
        <translation>run.json в точности так, как он будет записан:</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>The sbatch script as it will be uploaded to cluster:</source>
        <translation>Скрипт sbatch в том виде, в каком он будет загружен на кластер:</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Preview</source>
        <translation>Предпросмотр</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Double-click a problem to go to its field</source>
        <translation>Дважды щёлкните ошибку, чтобы перейти к её полю</translation>
    </message>
    <message>
        <location line="+10"/>
        <location line="+327"/>
        <source>Submit</source>
        <translation>Отправить</translation>
    </message>
    <message>
        <location line="-322"/>
        <source>Where the run goes: this computer, or a cluster profile (Clusters page)</source>
        <translation>Где выполняется запуск: этот компьютер или профиль кластера (страница «Кластеры»)</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+348"/>
        <source>This computer</source>
        <translation>Этот компьютер</translation>
    </message>
    <message>
        <location line="-344"/>
        <source>Run on:</source>
        <translation>Выполнять на:</translation>
    </message>
    <message numerus="yes">
        <location line="+64"/>
        <source>Show advanced settings (%n)</source>
        <translation>
            <numerusform>Показать дополнительные настройки (%n)</numerusform>
            <numerusform>Показать дополнительные настройки (%n)</numerusform>
            <numerusform>Показать дополнительные настройки (%n)</numerusform>
        </translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Settings most runs leave at their defaults</source>
        <translation>Настройки, которые в большинстве запусков остаются по умолчанию</translation>
    </message>
    <message>
        <location line="+52"/>
        <source>Choose a folder</source>
        <translation>Выберите папку</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Choose a file</source>
        <translation>Выберите файл</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>Shown although folded, because of a problem: %1</source>
        <translation>Показано, хотя скрыто, из-за ошибки: %1</translation>
    </message>
    <message>
        <location line="+63"/>
        <source>The run config is valid.</source>
        <translation>Конфигурация запуска корректна.</translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>%n problem(s) to fix before submitting.</source>
        <translation>
            <numerusform>%n ошибку нужно исправить перед отправкой.</numerusform>
            <numerusform>%n ошибки нужно исправить перед отправкой.</numerusform>
            <numerusform>%n ошибок нужно исправить перед отправкой.</numerusform>
        </translation>
    </message>
    <message>
        <location line="+58"/>
        <source>&lt;b&gt;Derived&lt;/b&gt;&lt;br&gt;World size: %1 node(s) x %2 task(s) = %3 rank(s)&lt;br&gt;Global batch: %4 per device x %5 accumulation x %3 ranks = &lt;b&gt;%6 sequences&lt;/b&gt;&lt;br&gt;Tokens per optimizer step: %6 x %7 = &lt;b&gt;%8&lt;/b&gt;</source>
        <translation>&lt;b&gt;Производные величины&lt;/b&gt;&lt;br&gt;Число процессов: узлов %1 × задач %2 = %3&lt;br&gt;Глобальный батч: %4 на устройство × накопление %5 × процессов %3 = &lt;b&gt;%6 последовательностей&lt;/b&gt;&lt;br&gt;Токенов на шаг оптимизатора: %6 × %7 = &lt;b&gt;%8&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>&lt;br&gt;Model: %1 parameters, %2 trainable (%3); memory per device and time: the plan below</source>
        <translation>&lt;br&gt;Модель: параметров %1, обучаемых %2 (%3); память на устройство и время: в плане ниже</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>none while the run config has problems</source>
        <translation>нет, пока в конфигурации запуска есть ошибки</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>The model&apos;s config.json (a local copy)</source>
        <translation>config.json модели (локальная копия)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>config.json (*.json)</source>
        <translation>config.json (*.json)</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>The plan says this run does not fit: peak %1 per device, %2 available.</source>
        <translation>По плану запуск не помещается: пик %1 на устройство, доступно %2.</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Submit anyway</source>
        <translation>Всё равно отправить</translation>
    </message>
    <message>
        <location line="+31"/>
        <source>(example cluster)</source>
        <translation>(пример кластера)</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>&lt;br&gt;Cluster %1 (sinfo): %2</source>
        <translation>&lt;br&gt;Кластер %1 (sinfo): %2</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>sinfo: %1</source>
        <translation>sinfo: %1</translation>
    </message>
    <message>
        <location line="+22"/>
        <source># Cannot render the sbatch script:
# %1</source>
        <translation># Не удаётся построить скрипт sbatch:
# %1</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>&lt;b&gt;%1&lt;/b&gt;: %2</source>
        <translation>&lt;b&gt;%1&lt;/b&gt;: %2</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 is not in the NGC PyTorch catalogue (%2 images known)</source>
        <translation>%1 нет в каталоге NGC PyTorch (известно образов: %2)</translation>
    </message>
    <message>
        <location line="+59"/>
        <location line="+26"/>
        <source> (mine)</source>
        <translation> (мой)</translation>
    </message>
</context>
<context>
    <name>slipway::app::RunTracker</name>
    <message>
        <location filename="../../app/runs/run_tracker.cpp" line="-43"/>
        <source>submit: %1</source>
        <translation>отправка: %1</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>job %1 ended %2</source>
        <translation>задача %1 завершилась: %2</translation>
    </message>
    <message>
        <location line="-24"/>
        <source>the engine ended with %1</source>
        <translation>движок завершился: %1</translation>
    </message>
    <message>
        <location line="-6"/>
        <source>Started %1: %2</source>
        <translation>Запущен %1: %2</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Cancelling %1...</source>
        <translation>Отмена %1...</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>scancel %1 sent</source>
        <translation>scancel %1 отправлен</translation>
    </message>
    <message>
        <location line="-9"/>
        <source>Submitting %1 to %2...</source>
        <translation>Отправка %1 на %2...</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Submitted job %1 to %2 (%3)</source>
        <translation>Задача %1 отправлена на %2 (%3)</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Job %1: %2</source>
        <translation>Задача %1: %2</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Job %1 is %2 again (requeued): following it on</source>
        <translation>Задача %1 снова в состоянии %2 (перезапущена): продолжаем следить</translation>
    </message>
    <message>
        <location line="-6"/>
        <source>Cancelling job %1 failed: %2</source>
        <translation>Не удалось отменить задачу %1: %2</translation>
    </message>
</context>
<context>
    <name>slipway::app::RunsPage</name>
    <message>
        <location filename="../../app/runs/runs_model.cpp" line="+35"/>
        <source>last train_loss %1</source>
        <translation>последний train_loss %1</translation>
    </message>
    <message>
        <location line="-346"/>
        <source>, restarts: %1</source>
        <translation>, перезапусков: %1</translation>
    </message>
    <message>
        <location filename="../../app/runs_page.cpp" line="+128"/>
        <source>Export GGUF...</source>
        <translation>Экспорт в GGUF...</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The selected run&apos;s model (LoRA merged) as one GGUF file for llama.cpp or Ollama (a model on this computer)</source>
        <translation>Модель выбранного запуска (с влитым LoRA) одним файлом GGUF для llama.cpp или Ollama (модель на этом компьютере)</translation>
    </message>
    <message>
        <location filename="../../app/runs/runs_model.cpp" line="-14"/>
        <source>log file</source>
        <translation>файл журнала</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>This computer</source>
        <translation>Этот компьютер</translation>
    </message>
    <message>
        <location line="+407"/>
        <source>Id</source>
        <translation>ID</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Name</source>
        <translation>Имя</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cluster</source>
        <translation>Кластер</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Job</source>
        <translation>Задача</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>State</source>
        <translation>Состояние</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Started</source>
        <translation>Начат</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Finished</source>
        <translation>Завершён</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Points</source>
        <translation>Точки</translation>
    </message>
    <message>
        <location line="-3"/>
        <source>train_loss</source>
        <translation>train_loss</translation>
    </message>
    <message>
        <location filename="../../app/runs_page.cpp" line="-19"/>
        <source>Filter by name, cluster, job or state</source>
        <translation>Фильтр по имени, кластеру, задаче или состоянию</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Compare selected</source>
        <translation>Сравнить выбранные</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Overlay the selected runs&apos; curves in the monitor (select several with Ctrl or Shift)</source>
        <translation>Наложить кривые выбранных запусков в мониторе (несколько — с Ctrl или Shift)</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Show in monitor</source>
        <translation>Показать в мониторе</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Resume following</source>
        <translation>Продолжить отслеживание</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Follow the run&apos;s log again from where the history stopped reading it</source>
        <translation>Снова отслеживать журнал запуска с того места, где история прекратила его читать</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open config in editor</source>
        <translation>Открыть конфигурацию в редакторе</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Chat</source>
        <translation>Чат</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Talk to the selected run&apos;s model (a completed run) on the Chat page</source>
        <translation>Поговорить с моделью выбранного запуска (завершённого) на странице «Чат»</translation>
    </message>
    <message>
        <location line="+5"/>
        <location line="+128"/>
        <location line="+3"/>
        <source>Export metrics</source>
        <translation>Экспорт метрик</translation>
    </message>
    <message>
        <location line="-130"/>
        <source>The selected run&apos;s curves where your team looks: TensorBoard or MLflow</source>
        <translation>Кривые выбранного запуска туда, где их смотрит ваша команда: TensorBoard или MLflow</translation>
    </message>
    <message>
        <location line="+56"/>
        <source>To MLflow...</source>
        <translation>В MLflow...</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>MLflow file store folder (mlruns)</source>
        <translation>Папка файлового хранилища MLflow (mlruns)</translation>
    </message>
    <message>
        <location line="+71"/>
        <source>Wrote %1

%2</source>
        <translation>Записан %1

%2</translation>
    </message>
    <message>
        <location line="-124"/>
        <source>Delete</source>
        <translation>Удалить</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>&lt;b&gt;Runs&lt;/b&gt; (history: %1)</source>
        <translation>&lt;b&gt;Запуски&lt;/b&gt; (история: %1)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>kept across restarts</source>
        <translation>сохраняется между перезапусками</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>not available</source>
        <translation>недоступна</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>To TensorBoard...</source>
        <translation>В TensorBoard...</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>TensorBoard log folder</source>
        <translation>Папка журналов TensorBoard</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Delete run</source>
        <translation>Удалить запуск</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Delete run %1 and its points from the history?</source>
        <translation>Удалить запуск %1 и его точки из истории?</translation>
    </message>
    <message>
        <location filename="../../app/runs/runs_model.cpp" line="-403"/>
        <source>%1 (%2)</source>
        <translation>%1 (%2)</translation>
    </message>
</context>
</TS>
