<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en">
<context>
    <name>llmcap::gui::AnswerCard</name>
    <message>
        <location filename="../answer_card.cpp" line="70"/>
        <source>p99 %1 (%2% margin), the smallest fleet meeting the SLO</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="74"/>
        <source>KV cache capacity: requests preempted for want of KV blocks (%1% margin)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="79"/>
        <source>none, one instance suffices (%1% margin)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="88"/>
        <source>The cheapest %1 fleet, %2 × %3 at %4/hour, costs %5× as much.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="97"/>
        <source>No %1 instance type meets the SLO (reasons in the table).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="106"/>
        <source>&lt;b&gt;Answer:&lt;/b&gt; run a plan to see the recommended fleet.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="112"/>
        <source>&lt;b&gt;Answer:&lt;/b&gt; %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="115"/>
        <source>&lt;b&gt;Answer: %1 × %2&lt;/b&gt; (%3), %4</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="118"/>
        <source>%1/hour (%2), %3/month, %4/year</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="123"/>
        <source>; %1% range %2 to %3/hour</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="127"/>
        <source>no fleet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="129"/>
        <source>Binding: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="131"/>
        <source>Runner-up: %1 × %2 at %3/hour</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="140"/>
        <source>Quick what-if: the configurations the last full run&apos;s search chose are kept where they apply; no analyses ran.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="142"/>
        <source>Quick what-if: no analyses or search ran.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="147"/>
        <source>Before: %1 × %2 at %3/hour; change %4%5/hour</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="153"/>
        <source>Before: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmcap::gui::AuditView</name>
    <message>
        <location filename="../audit_view.cpp" line="57"/>
        <source>Open a claims file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../audit_view.cpp" line="58"/>
        <source>JSON files (*.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../audit_view.cpp" line="74"/>
        <source>Open a claims file…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../audit_view.cpp" line="77"/>
        <source>Each claim is checked against the roofline lower bound and the predictor (docs/audit.md).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../audit_view.cpp" line="80"/>
        <source>Claims: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../audit_view.cpp" line="82"/>
        <source>Claim</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../audit_view.cpp" line="82"/>
        <source>Verdict</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../audit_view.cpp" line="82"/>
        <source>Claimed (ms)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../audit_view.cpp" line="83"/>
        <source>Lower bound (ms)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../audit_view.cpp" line="83"/>
        <source>Predicted (ms)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../audit_view.cpp" line="84"/>
        <source>Factor (predicted / claimed)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../audit_view.cpp" line="88"/>
        <source>plausible</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../audit_view.cpp" line="89"/>
        <source>optimistic</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../audit_view.cpp" line="90"/>
        <source>impossible</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmcap::gui::CalibrationView</name>
    <message>
        <location filename="../calibration_view.cpp" line="89"/>
        <source>Open a calibration profile</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="90"/>
        <source>JSON files (*.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="104"/>
        <source>Calibrating…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="104"/>
        <source>Run a quick calibration (~11 s)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="111"/>
        <source>Open a profile…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="112"/>
        <source>Use this profile for CPU instance types in plans</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="113"/>
        <source>Kernel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="113"/>
        <source>Format</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="113"/>
        <source>Shape</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="113"/>
        <source>Batch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="114"/>
        <source>Threads</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="114"/>
        <source>GB/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="114"/>
        <source>Machine read GB/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="115"/>
        <source>Fraction</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="117"/>
        <source>Kernel bandwidth against the machine&apos;s read bandwidth (GB/s)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="120"/>
        <source>No calibration yet: run one, or open a profile written by `llmcap calibrate --out`.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="229"/>
        <source>%1, %2 logical CPUs; read bandwidth %3 GB/s at %4 threads. Kernels measured at %4 threads on operands rotated through memory (cache-resident samples left out).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="105"/>
        <source>Also time the shapes of:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="106"/>
        <source>no model (the sweep&apos;s shapes)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="108"/>
        <source>A model&apos;s own matrix shapes (every format) and attention layout are timed too, so that plans of that model use their measured times (llmcap calibrate --model); a quick run then takes a few seconds more.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmcap::gui::ChartsView</name>
    <message>
        <location filename="../charts_view.cpp" line="101"/>
        <source>%1: %2 instances, %3 USD/hour</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../charts_view.cpp" line="105"/>
        <source>%1: infeasible: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../charts_view.cpp" line="191"/>
        <source>Fleet cost against load (USD/hour)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../charts_view.cpp" line="192"/>
        <source>Fleet cost against load (USD/hour): each load planned adds a point</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../charts_view.cpp" line="193"/>
        <source>Latency CDF (fraction of requests)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../charts_view.cpp" line="197"/>
        <source>Fleet size over the day: shown after a run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../charts_view.cpp" line="450"/>
        <source>p99 SLO %1 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../charts_view.cpp" line="202"/>
        <location filename="../charts_view.cpp" line="207"/>
        <source>TTFT (s)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../charts_view.cpp" line="188"/>
        <source>Fleet cost (USD/hour; ✗ infeasible)</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <location filename="../charts_view.cpp" line="196"/>
        <source>Fleet size over the day (%n cheapest types)</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <location filename="../charts_view.cpp" line="203"/>
        <location filename="../charts_view.cpp" line="207"/>
        <source>TPOT (s)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../charts_view.cpp" line="205"/>
        <source>load multiplier</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../charts_view.cpp" line="210"/>
        <source>hour of day</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmcap::gui::MainWindow</name>
    <message>
        <location filename="../main_window.cpp" line="418"/>
        <source>Open a scenario</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="420"/>
        <location filename="../main_window.cpp" line="432"/>
        <source>Scenarios (*.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="430"/>
        <source>Save the scenario as</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="465"/>
        <source>The Chinese translation could not be loaded.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="478"/>
        <source>llmcap — what-if capacity planner</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="479"/>
        <source>llmcap — %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="481"/>
        <source>Scenario</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="482"/>
        <source>What-if</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="483"/>
        <source>Runs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="484"/>
        <source>Calibration</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="485"/>
        <source>Audit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="486"/>
        <source>Load multiplier</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="487"/>
        <source>SLO: p99 TTFT</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="488"/>
        <source>SLO: p99 TPOT</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="491"/>
        <source>Price model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="492"/>
        <source>Currency</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="493"/>
        <source>catalog&apos;s own</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="494"/>
        <source>on-demand</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="495"/>
        <source>reserved 1 year</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="496"/>
        <source>reserved 3 years</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="497"/>
        <source>spot</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="498"/>
        <source>capacity block</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="504"/>
        <location filename="../main_window.cpp" line="520"/>
        <source>Run full plan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="508"/>
        <source>&amp;File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="509"/>
        <source>&amp;Open scenario…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="510"/>
        <source>Recent files</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="511"/>
        <source>&amp;Save scenario</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="512"/>
        <source>Save scenario &amp;as…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="513"/>
        <source>&amp;Export report</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="514"/>
        <source>PDF…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="515"/>
        <source>HTML…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="516"/>
        <source>CSV…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="517"/>
        <source>Excel workbook (XLSX)…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="518"/>
        <source>&amp;Quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="519"/>
        <source>&amp;Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="521"/>
        <source>Store full runs in the results database</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="522"/>
        <source>&amp;Language</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="549"/>
        <source>No catalog loaded from %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="569"/>
        <source>Opened %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="592"/>
        <source>Saved %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="663"/>
        <source>Export to %1 cancelled: the inputs changed before its full run finished.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="748"/>
        <source>Planning (full run with analyses)…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="748"/>
        <source>Planning (full run)…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="749"/>
        <source>Planning what-if (load %1×)…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="840"/>
        <source>; stored as run %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="843"/>
        <source>; not stored: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="846"/>
        <source>Full run: %1 instance types, %2 simulations, %3 s%4</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="857"/>
        <source>What-if at load %1×: first row after %2 s, all %3 rows after %4 s (%5 simulations)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="59"/>
        <source>; engines: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="68"/>
        <source>; not offered under %1 (no TCO): %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="405"/>
        <source>Opened the what-if &quot;%1&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="489"/>
        <source>GPU weights</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="490"/>
        <source>CPU weights</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="505"/>
        <source>with analyses</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="507"/>
        <source>Also run the analyses: cost against load, latency CDFs, search, uncertainty</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window_what_ifs.cpp" line="16"/>
        <source>load %1×</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window_what_ifs.cpp" line="20"/>
        <source>%1 on GPUs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window_what_ifs.cpp" line="20"/>
        <source>%1 on CPUs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window_what_ifs.cpp" line="26"/>
        <source>p99 TTFT %1 s, TPOT %2 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window_what_ifs.cpp" line="31"/>
        <source>catalog prices</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window_what_ifs.cpp" line="38"/>
        <source>edited prices</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window_what_ifs.cpp" line="40"/>
        <source>other candidates</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window_what_ifs.cpp" line="41"/>
        <source>edited scenario</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window_what_ifs.cpp" line="42"/>
        <source>as opened</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="988"/>
        <source>Nothing to export yet: run a full plan first (Run ▸ Run full plan).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="997"/>
        <source>Exported %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="1003"/>
        <source>Nothing to export yet: open a scenario first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="1015"/>
        <source>Running the full plan of the current inputs for the export to %1…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="1022"/>
        <source>Export the report</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmcap::gui::ResultsModel</name>
    <message>
        <location filename="../results_model.cpp" line="113"/>
        <source>running…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="114"/>
        <source>feasible</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="114"/>
        <source>infeasible</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="149"/>
        <source>Instance type</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="151"/>
        <source>Device</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="153"/>
        <source>Status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="155"/>
        <source>Fleet size</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="157"/>
        <source>USD/hour</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="159"/>
        <source>USD per M output tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="161"/>
        <source>TTFT p50</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="163"/>
        <source>TTFT p99</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="165"/>
        <source>TPOT p50</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="167"/>
        <source>TPOT p99</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="169"/>
        <source>Reason (infeasible)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="171"/>
        <source>TTFT p90</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="173"/>
        <source>TTFT max</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="175"/>
        <source>TPOT p90</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="177"/>
        <source>TPOT max</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmcap::gui::RunsView</name>
    <message>
        <location filename="../runs_view.cpp" line="115"/>
        <location filename="../runs_view.cpp" line="291"/>
        <source>run %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="122"/>
        <source>Select two runs or what-ifs to compare.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="136"/>
        <source>Refresh</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="137"/>
        <source>Open</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="138"/>
        <source>Compare two</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="139"/>
        <source>Database: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="141"/>
        <source>Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="141"/>
        <source>Kind</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="141"/>
        <source>Name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="141"/>
        <source>Created (UTC)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="141"/>
        <source>Summary</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="143"/>
        <source>Instance type</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="143"/>
        <location filename="../runs_view.cpp" line="144"/>
        <source>%1: fleet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="143"/>
        <location filename="../runs_view.cpp" line="144"/>
        <source>%1: USD/hour</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="145"/>
        <source>%1: reason</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="147"/>
        <source>What-ifs of this session (kept until the window closes, not in the database):</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="148"/>
        <source>What-if</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="148"/>
        <source>Answer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="148"/>
        <source>USD/hour</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="307"/>
        <source>%1 or %2 holds no plan results to compare.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>llmcap::gui::ScenarioPanel</name>
    <message>
        <location filename="../scenario_panel.cpp" line="76"/>
        <source>Open a model config.json</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="77"/>
        <source>JSON files (*.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="126"/>
        <source>Open a trace or length file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="127"/>
        <source>CSV files (*.csv);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="180"/>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="181"/>
        <source>Open another config.json…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="182"/>
        <source>Workload</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="183"/>
        <source>Kind</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="185"/>
        <source>Trace file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="185"/>
        <source>Length file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="186"/>
        <source>Requests per second</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="187"/>
        <source>Duration (s)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="188"/>
        <source>Weibull shape</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="188"/>
        <source>CV of gaps</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="189"/>
        <source>Users</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="190"/>
        <source>Think time (s)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="191"/>
        <source>SLO (p99)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="192"/>
        <source>TTFT (s)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="193"/>
        <source>TPOT (s)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="194"/>
        <source>Candidate instance types and prices</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="196"/>
        <source>Use</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="196"/>
        <source>Instance type</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="196"/>
        <source>Device</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="196"/>
        <source>Price model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="196"/>
        <source>USD/hour</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="255"/>
        <source>Scenario: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="313"/>
        <source>Source: %1 (as of %2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="317"/>
        <source>No %1 price in the catalog</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="323"/>
        <source>Edited in llmcap-gui (as of %1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="391"/>
        <source>Choose at least one instance type.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
