<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en">
<context>
    <name>llmcap::gui::AnswerCard</name>
    <message>
        <location filename="../answer_card.cpp" line="69"/>
        <source>p99 %1 (%2% margin), the smallest fleet meeting the SLO</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="73"/>
        <source>KV cache capacity: requests preempted for want of KV blocks (%1% margin)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="78"/>
        <source>none, one instance suffices (%1% margin)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="87"/>
        <source>The cheapest %1 fleet, %2 × %3 at %4/hour, costs %5× as much.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="96"/>
        <source>No %1 instance type meets the SLO (reasons in the table).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="105"/>
        <source>&lt;b&gt;Answer:&lt;/b&gt; run a plan to see the recommended fleet.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="111"/>
        <source>&lt;b&gt;Answer:&lt;/b&gt; %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="114"/>
        <source>&lt;b&gt;Answer: %1 × %2&lt;/b&gt; (%3), %4</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="117"/>
        <source>%1/hour (%2), %3/month, %4/year</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="122"/>
        <source>; %1% range %2 to %3/hour</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="126"/>
        <source>no fleet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="128"/>
        <source>Binding: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="130"/>
        <source>Runner-up: %1 × %2 at %3/hour</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="137"/>
        <source>Quick what-if: no analyses or search ran.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="140"/>
        <source>Before: %1 × %2 at %3/hour; change %4%5/hour</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="146"/>
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
        <location filename="../main_window.cpp" line="396"/>
        <source>Open a scenario</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="398"/>
        <location filename="../main_window.cpp" line="410"/>
        <source>Scenarios (*.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="408"/>
        <source>Save the scenario as</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="443"/>
        <source>The Chinese translation could not be loaded.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="456"/>
        <source>llmcap — what-if capacity planner</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="457"/>
        <source>llmcap — %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="459"/>
        <source>Scenario</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="460"/>
        <source>What-if</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="461"/>
        <source>Runs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="462"/>
        <source>Calibration</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="463"/>
        <source>Audit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="464"/>
        <source>Load multiplier</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="465"/>
        <source>SLO: p99 TTFT</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="466"/>
        <source>SLO: p99 TPOT</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="467"/>
        <source>Weight format</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="468"/>
        <source>Price model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="469"/>
        <source>catalog&apos;s own</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="470"/>
        <source>on-demand</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="471"/>
        <source>reserved 1 year</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="472"/>
        <source>reserved 3 years</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="473"/>
        <source>spot</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="474"/>
        <source>capacity block</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="480"/>
        <location filename="../main_window.cpp" line="496"/>
        <source>Run full plan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="484"/>
        <source>&amp;File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="485"/>
        <source>&amp;Open scenario…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="486"/>
        <source>Recent files</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="487"/>
        <source>&amp;Save scenario</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="488"/>
        <source>Save scenario &amp;as…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="489"/>
        <source>&amp;Export report</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="490"/>
        <source>PDF…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="491"/>
        <source>HTML…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="492"/>
        <source>CSV…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="493"/>
        <source>Excel workbook (XLSX)…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="494"/>
        <source>&amp;Quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="495"/>
        <source>&amp;Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="497"/>
        <source>Store full runs in the results database</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="498"/>
        <source>&amp;Language</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="525"/>
        <source>No catalog loaded from %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="545"/>
        <source>Opened %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="568"/>
        <source>Saved %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="635"/>
        <source>Export to %1 cancelled: the inputs changed before its full run finished.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="717"/>
        <source>Planning (full run with analyses)…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="717"/>
        <source>Planning (full run)…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="718"/>
        <source>Planning what-if (load %1×)…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="803"/>
        <source>; stored as run %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="806"/>
        <source>; not stored: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="809"/>
        <source>Full run: %1 instance types, %2 simulations, %3 s%4</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="820"/>
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
        <location filename="../main_window.cpp" line="383"/>
        <source>Opened the what-if &quot;%1&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="481"/>
        <source>with analyses</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="483"/>
        <source>Also run the analyses: cost against load, latency CDFs, search, uncertainty</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window_what_ifs.cpp" line="16"/>
        <source>load %1×</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window_what_ifs.cpp" line="23"/>
        <source>p99 TTFT %1 s, TPOT %2 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window_what_ifs.cpp" line="28"/>
        <source>catalog prices</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window_what_ifs.cpp" line="32"/>
        <source>edited prices</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window_what_ifs.cpp" line="34"/>
        <source>other candidates</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window_what_ifs.cpp" line="35"/>
        <source>edited scenario</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window_what_ifs.cpp" line="36"/>
        <source>as opened</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="928"/>
        <source>Nothing to export yet: run a full plan first (Run ▸ Run full plan).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="937"/>
        <source>Exported %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="943"/>
        <source>Nothing to export yet: open a scenario first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="955"/>
        <source>Running the full plan of the current inputs for the export to %1…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="962"/>
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
