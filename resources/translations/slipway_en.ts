<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en_US">
<context>
    <name>Presets</name>
    <message numerus="yes">
        <location filename="../../app/editor/presets.cpp" line="+82"/>
        <source>%n GPU(s)</source>
        <translation>
            <numerusform>%n GPU</numerusform>
            <numerusform>%n GPUs</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>%n CPU rank(s)</source>
        <translation>
            <numerusform>%n CPU rank</numerusform>
            <numerusform>%n CPU ranks</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>%n node(s)</source>
        <translation>
            <numerusform>%n node</numerusform>
            <numerusform>%n nodes</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>slipway::app::AdaptPage</name>
    <message numerus="yes">
        <location filename="../../app/adapt/adapt_page.cpp" line="+253"/>
        <source>%n step(s), ready to start.</source>
        <translation>
            <numerusform>%n step, ready to start.</numerusform>
            <numerusform>%n steps, ready to start.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>slipway::app::DataPreviewPanel</name>
    <message numerus="yes">
        <location filename="../../app/editor/data_preview_panel.cpp" line="+114"/>
        <source>all %n line(s) of the file</source>
        <translation>
            <numerusform>the only line of the file</numerusform>
            <numerusform>all %n lines of the file</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>the first %n line(s)</source>
        <translation>
            <numerusform>the first line</numerusform>
            <numerusform>the first %n lines</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>slipway::app::MainWindow</name>
    <message numerus="yes">
        <location filename="../../app/main_window.cpp" line="+455"/>
        <source>%n run(s) still training on this computer. Quitting stops them (a checkpoint is saved). Quit anyway?</source>
        <translation>
            <numerusform>%n run is still training on this computer. Quitting stops it (a checkpoint is saved). Quit anyway?</numerusform>
            <numerusform>%n runs are still training on this computer. Quitting stops them (a checkpoint is saved). Quit anyway?</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+150"/>
        <source>Comparing %n run(s)</source>
        <translation>
            <numerusform>Comparing %n run</numerusform>
            <numerusform>Comparing %n runs</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>slipway::app::RemoteBrowser</name>
    <message numerus="yes">
        <location filename="../../app/clusters/remote_browser.cpp" line="+75"/>
        <source>%n entries</source>
        <translation>
            <numerusform>%n entry</numerusform>
            <numerusform>%n entries</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>slipway::app::RunEditor</name>
    <message numerus="yes">
        <location filename="../../app/editor/run_editor.cpp" line="+270"/>
        <source>Show advanced settings (%n)</source>
        <translation>
            <numerusform>Show advanced settings (%n)</numerusform>
            <numerusform>Show advanced settings (%n)</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+140"/>
        <source>%n problem(s) to fix before submitting.</source>
        <translation>
            <numerusform>%n problem to fix before submitting.</numerusform>
            <numerusform>%n problems to fix before submitting.</numerusform>
        </translation>
    </message>
</context>
</TS>
