<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>llmcap::gui::AnswerCard</name>
    <message>
        <location filename="../answer_card.cpp" line="70"/>
        <source>p99 %1 (%2% margin), the smallest fleet meeting the SLO</source>
        <translation>p99 %1（余量 %2%），满足 SLO 的最小集群</translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="74"/>
        <source>KV cache capacity: requests preempted for want of KV blocks (%1% margin)</source>
        <translation>KV 缓存容量：因缺少 KV 块而抢占请求（余量 %1%）</translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="79"/>
        <source>none, one instance suffices (%1% margin)</source>
        <translation>无，一个实例即可（余量 %1%）</translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="88"/>
        <source>The cheapest %1 fleet, %2 × %3 at %4/hour, costs %5× as much.</source>
        <translation>最便宜的 %1 集群为 %2 × %3，%4/小时，成本为推荐方案的 %5 倍。</translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="97"/>
        <source>No %1 instance type meets the SLO (reasons in the table).</source>
        <translation>没有 %1 实例类型满足 SLO（原因见表格）。</translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="106"/>
        <source>&lt;b&gt;Answer:&lt;/b&gt; run a plan to see the recommended fleet.</source>
        <translation>&lt;b&gt;答案：&lt;/b&gt;运行规划以查看推荐的集群。</translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="112"/>
        <source>&lt;b&gt;Answer:&lt;/b&gt; %1</source>
        <translation>&lt;b&gt;答案：&lt;/b&gt;%1</translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="115"/>
        <source>&lt;b&gt;Answer: %1 × %2&lt;/b&gt; (%3), %4</source>
        <translation>&lt;b&gt;答案：%1 × %2&lt;/b&gt;（%3），%4</translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="118"/>
        <source>%1/hour (%2), %3/month, %4/year</source>
        <translation>%1/小时（%2），%3/月，%4/年</translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="123"/>
        <source>; %1% range %2 to %3/hour</source>
        <translation>；%1% 区间 %2 至 %3/小时</translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="127"/>
        <source>no fleet</source>
        <translation>无满足 SLO 的集群</translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="129"/>
        <source>Binding: %1</source>
        <translation>约束：%1</translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="131"/>
        <source>Runner-up: %1 × %2 at %3/hour</source>
        <translation>次优：%1 × %2，%3/小时</translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="140"/>
        <source>Quick what-if: the configurations the last full run&apos;s search chose are kept where they apply; no analyses ran.</source>
        <translation>快速假设分析：在仍适用之处沿用上次完整运行的配置搜索所选的配置；未运行分析。</translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="142"/>
        <source>Quick what-if: no analyses or search ran.</source>
        <translation>快速假设分析：未运行分析与配置搜索。</translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="147"/>
        <source>Before: %1 × %2 at %3/hour; change %4%5/hour</source>
        <translation>此前：%1 × %2，%3/小时；变化 %4%5/小时</translation>
    </message>
    <message>
        <location filename="../answer_card.cpp" line="153"/>
        <source>Before: %1</source>
        <translation>此前：%1</translation>
    </message>
</context>
<context>
    <name>llmcap::gui::AuditView</name>
    <message>
        <location filename="../audit_view.cpp" line="57"/>
        <source>Open a claims file</source>
        <translation>打开声明文件</translation>
    </message>
    <message>
        <location filename="../audit_view.cpp" line="58"/>
        <source>JSON files (*.json)</source>
        <translation>JSON 文件 (*.json)</translation>
    </message>
    <message>
        <location filename="../audit_view.cpp" line="74"/>
        <source>Open a claims file…</source>
        <translation>打开声明文件…</translation>
    </message>
    <message>
        <location filename="../audit_view.cpp" line="77"/>
        <source>Each claim is checked against the roofline lower bound and the predictor (docs/audit.md).</source>
        <translation>每条声明都与屋顶线（roofline）下限和预测器对照检查（见 docs/audit.md）。</translation>
    </message>
    <message>
        <location filename="../audit_view.cpp" line="80"/>
        <source>Claims: %1</source>
        <translation>声明：%1</translation>
    </message>
    <message>
        <location filename="../audit_view.cpp" line="82"/>
        <source>Claim</source>
        <translation>声明</translation>
    </message>
    <message>
        <location filename="../audit_view.cpp" line="82"/>
        <source>Verdict</source>
        <translation>结论</translation>
    </message>
    <message>
        <location filename="../audit_view.cpp" line="82"/>
        <source>Claimed (ms)</source>
        <translation>声称值（毫秒）</translation>
    </message>
    <message>
        <location filename="../audit_view.cpp" line="83"/>
        <source>Lower bound (ms)</source>
        <translation>下限（毫秒）</translation>
    </message>
    <message>
        <location filename="../audit_view.cpp" line="83"/>
        <source>Predicted (ms)</source>
        <translation>预测值（毫秒）</translation>
    </message>
    <message>
        <location filename="../audit_view.cpp" line="84"/>
        <source>Factor (predicted / claimed)</source>
        <translation>倍数（预测 / 声称）</translation>
    </message>
    <message>
        <location filename="../audit_view.cpp" line="88"/>
        <source>plausible</source>
        <translation>可信</translation>
    </message>
    <message>
        <location filename="../audit_view.cpp" line="89"/>
        <source>optimistic</source>
        <translation>偏乐观</translation>
    </message>
    <message>
        <location filename="../audit_view.cpp" line="90"/>
        <source>impossible</source>
        <translation>不可能</translation>
    </message>
</context>
<context>
    <name>llmcap::gui::CalibrationView</name>
    <message>
        <location filename="../calibration_view.cpp" line="89"/>
        <source>Open a calibration profile</source>
        <translation>打开校准配置文件</translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="90"/>
        <source>JSON files (*.json)</source>
        <translation>JSON 文件 (*.json)</translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="104"/>
        <source>Calibrating…</source>
        <translation>正在校准…</translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="104"/>
        <source>Run a quick calibration (~11 s)</source>
        <translation>运行快速校准（约 11 秒）</translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="111"/>
        <source>Open a profile…</source>
        <translation>打开配置文件…</translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="112"/>
        <source>Use this profile for CPU instance types in plans</source>
        <translation>在规划中对 CPU 实例类型使用此配置文件</translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="113"/>
        <source>Kernel</source>
        <translation>内核</translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="113"/>
        <source>Format</source>
        <translation>格式</translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="113"/>
        <source>Shape</source>
        <translation>形状</translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="113"/>
        <source>Batch</source>
        <translation>批大小</translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="114"/>
        <source>Threads</source>
        <translation>线程数</translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="114"/>
        <source>GB/s</source>
        <translation>GB/s</translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="114"/>
        <source>Machine read GB/s</source>
        <translation>本机读带宽 GB/s</translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="115"/>
        <source>Fraction</source>
        <translation>占比</translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="117"/>
        <source>Kernel bandwidth against the machine&apos;s read bandwidth (GB/s)</source>
        <translation>内核带宽与本机读带宽对比（GB/s）</translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="120"/>
        <source>No calibration yet: run one, or open a profile written by `llmcap calibrate --out`.</source>
        <translation>尚未校准：请运行一次校准，或打开由 `llmcap calibrate --out` 生成的配置文件。</translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="229"/>
        <source>%1, %2 logical CPUs; read bandwidth %3 GB/s at %4 threads. Kernels measured at %4 threads on operands rotated through memory (cache-resident samples left out).</source>
        <translation>%1，%2 个逻辑 CPU；%4 线程时读带宽 %3 GB/s。内核在 %4 线程下测量，操作数在内存中轮换（未计入驻留缓存的样本）。</translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="105"/>
        <source>Also time the shapes of:</source>
        <translation>同时测量以下模型的形状：</translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="106"/>
        <source>no model (the sweep&apos;s shapes)</source>
        <translation>无模型（仅扫描自带形状）</translation>
    </message>
    <message>
        <location filename="../calibration_view.cpp" line="108"/>
        <source>A model&apos;s own matrix shapes (every format) and attention layout are timed too, so that plans of that model use their measured times (llmcap calibrate --model); a quick run then takes a few seconds more.</source>
        <translation>同时测量该模型自身的矩阵形状（所有格式）和注意力布局，使该模型的规划使用实测时间（llmcap calibrate --model）；快速校准因此多用几秒。</translation>
    </message>
</context>
<context>
    <name>llmcap::gui::ChartsView</name>
    <message>
        <location filename="../charts_view.cpp" line="101"/>
        <source>%1: %2 instances, %3 USD/hour</source>
        <translation>%1：%2 个实例，每小时 %3 美元</translation>
    </message>
    <message>
        <location filename="../charts_view.cpp" line="105"/>
        <source>%1: infeasible: %2</source>
        <translation>%1：不可行：%2</translation>
    </message>
    <message>
        <location filename="../charts_view.cpp" line="191"/>
        <source>Fleet cost against load (USD/hour)</source>
        <translation>集群成本随负载变化（美元/小时）</translation>
    </message>
    <message>
        <location filename="../charts_view.cpp" line="192"/>
        <source>Fleet cost against load (USD/hour): each load planned adds a point</source>
        <translation>集群成本随负载变化（美元/小时）：每规划一个负载增加一个点</translation>
    </message>
    <message>
        <location filename="../charts_view.cpp" line="193"/>
        <source>Latency CDF (fraction of requests)</source>
        <translation>延迟累积分布（请求占比）</translation>
    </message>
    <message>
        <location filename="../charts_view.cpp" line="197"/>
        <source>Fleet size over the day: shown after a run</source>
        <translation>全天集群规模：运行后显示</translation>
    </message>
    <message>
        <location filename="../charts_view.cpp" line="450"/>
        <source>p99 SLO %1 s</source>
        <translation>p99 SLO %1 秒</translation>
    </message>
    <message>
        <location filename="../charts_view.cpp" line="202"/>
        <location filename="../charts_view.cpp" line="207"/>
        <source>TTFT (s)</source>
        <translation>TTFT（秒）</translation>
    </message>
    <message>
        <location filename="../charts_view.cpp" line="188"/>
        <source>Fleet cost (USD/hour; ✗ infeasible)</source>
        <translation>集群成本（美元/小时；✗ 不可行）</translation>
    </message>
    <message numerus="yes">
        <location filename="../charts_view.cpp" line="196"/>
        <source>Fleet size over the day (%n cheapest types)</source>
        <translation>
            <numerusform>全天集群规模（最便宜的 %n 种类型）</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../charts_view.cpp" line="203"/>
        <location filename="../charts_view.cpp" line="207"/>
        <source>TPOT (s)</source>
        <translation>TPOT（秒）</translation>
    </message>
    <message>
        <location filename="../charts_view.cpp" line="205"/>
        <source>load multiplier</source>
        <translation>负载倍数</translation>
    </message>
    <message>
        <location filename="../charts_view.cpp" line="210"/>
        <source>hour of day</source>
        <translation>小时</translation>
    </message>
</context>
<context>
    <name>llmcap::gui::MainWindow</name>
    <message>
        <location filename="../main_window.cpp" line="418"/>
        <source>Open a scenario</source>
        <translation>打开场景</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="420"/>
        <location filename="../main_window.cpp" line="432"/>
        <source>Scenarios (*.json)</source>
        <translation>场景文件 (*.json)</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="430"/>
        <source>Save the scenario as</source>
        <translation>场景另存为</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="465"/>
        <source>The Chinese translation could not be loaded.</source>
        <translation>无法加载中文翻译。</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="478"/>
        <source>llmcap — what-if capacity planner</source>
        <translation>llmcap — 假设分析容量规划器</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="479"/>
        <source>llmcap — %1</source>
        <translation>llmcap — %1</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="481"/>
        <source>Scenario</source>
        <translation>场景</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="482"/>
        <source>What-if</source>
        <translation>假设分析</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="483"/>
        <source>Runs</source>
        <translation>运行记录</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="484"/>
        <source>Calibration</source>
        <translation>校准</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="485"/>
        <source>Audit</source>
        <translation>审核</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="486"/>
        <source>Load multiplier</source>
        <translation>负载倍数</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="487"/>
        <source>SLO: p99 TTFT</source>
        <translation>SLO：p99 TTFT</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="488"/>
        <source>SLO: p99 TPOT</source>
        <translation>SLO：p99 TPOT</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="491"/>
        <source>Price model</source>
        <translation>计价模式</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="492"/>
        <source>Currency</source>
        <translation>货币</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="493"/>
        <source>catalog&apos;s own</source>
        <translation>目录默认</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="494"/>
        <source>on-demand</source>
        <translation>按需</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="495"/>
        <source>reserved 1 year</source>
        <translation>预留 1 年</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="496"/>
        <source>reserved 3 years</source>
        <translation>预留 3 年</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="497"/>
        <source>spot</source>
        <translation>竞价</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="498"/>
        <source>capacity block</source>
        <translation>容量块</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="504"/>
        <location filename="../main_window.cpp" line="520"/>
        <source>Run full plan</source>
        <translation>运行完整规划</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="508"/>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="509"/>
        <source>&amp;Open scenario…</source>
        <translation>打开场景(&amp;O)…</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="510"/>
        <source>Recent files</source>
        <translation>最近的文件</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="511"/>
        <source>&amp;Save scenario</source>
        <translation>保存场景(&amp;S)</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="512"/>
        <source>Save scenario &amp;as…</source>
        <translation>场景另存为(&amp;A)…</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="513"/>
        <source>&amp;Export report</source>
        <translation>导出报告(&amp;E)</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="514"/>
        <source>PDF…</source>
        <translation>PDF…</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="515"/>
        <source>HTML…</source>
        <translation>HTML…</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="516"/>
        <source>CSV…</source>
        <translation>CSV…</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="517"/>
        <source>Excel workbook (XLSX)…</source>
        <translation>Excel 工作簿（XLSX）…</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="518"/>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="519"/>
        <source>&amp;Run</source>
        <translation>运行(&amp;R)</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="521"/>
        <source>Store full runs in the results database</source>
        <translation>将完整运行保存到结果数据库</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="522"/>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="549"/>
        <source>No catalog loaded from %1</source>
        <translation>未能从 %1 加载目录</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="569"/>
        <source>Opened %1</source>
        <translation>已打开 %1</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="592"/>
        <source>Saved %1</source>
        <translation>已保存 %1</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="663"/>
        <source>Export to %1 cancelled: the inputs changed before its full run finished.</source>
        <translation>导出到 %1 已取消：其完整规划完成前输入已改变。</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="748"/>
        <source>Planning (full run with analyses)…</source>
        <translation>正在规划（完整运行，含分析）…</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="748"/>
        <source>Planning (full run)…</source>
        <translation>正在规划（完整运行）…</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="749"/>
        <source>Planning what-if (load %1×)…</source>
        <translation>正在进行假设分析（负载 %1×）…</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="840"/>
        <source>; stored as run %1</source>
        <translation>；已保存为运行 %1</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="843"/>
        <source>; not stored: %1</source>
        <translation>；未保存：%1</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="846"/>
        <source>Full run: %1 instance types, %2 simulations, %3 s%4</source>
        <translation>完整运行：%1 种实例类型，%2 次仿真，%3 秒%4</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="857"/>
        <source>What-if at load %1×: first row after %2 s, all %3 rows after %4 s (%5 simulations)</source>
        <translation>负载 %1× 的假设分析：%2 秒后出现首行，%4 秒后全部 %3 行完成（%5 次仿真）</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="59"/>
        <source>; engines: %1</source>
        <translation>；引擎：%1</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="68"/>
        <source>; not offered under %1 (no TCO): %2</source>
        <translation>；不提供 %1 价格（无 TCO）：%2</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="405"/>
        <source>Opened the what-if &quot;%1&quot;</source>
        <translation>已打开假设分析“%1”</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="489"/>
        <source>GPU weights</source>
        <translation>GPU 权重格式</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="490"/>
        <source>CPU weights</source>
        <translation>CPU 权重格式</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="505"/>
        <source>with analyses</source>
        <translation>含分析</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="507"/>
        <source>Also run the analyses: cost against load, latency CDFs, search, uncertainty</source>
        <translation>同时运行分析：成本随负载变化、延迟累积分布、配置搜索、不确定性</translation>
    </message>
    <message>
        <location filename="../main_window_what_ifs.cpp" line="16"/>
        <source>load %1×</source>
        <translation>负载 %1×</translation>
    </message>
    <message>
        <location filename="../main_window_what_ifs.cpp" line="20"/>
        <source>%1 on GPUs</source>
        <translation>GPU 上 %1</translation>
    </message>
    <message>
        <location filename="../main_window_what_ifs.cpp" line="20"/>
        <source>%1 on CPUs</source>
        <translation>CPU 上 %1</translation>
    </message>
    <message>
        <location filename="../main_window_what_ifs.cpp" line="26"/>
        <source>p99 TTFT %1 s, TPOT %2 s</source>
        <translation>p99 TTFT %1 秒，TPOT %2 秒</translation>
    </message>
    <message>
        <location filename="../main_window_what_ifs.cpp" line="31"/>
        <source>catalog prices</source>
        <translation>目录价格</translation>
    </message>
    <message>
        <location filename="../main_window_what_ifs.cpp" line="38"/>
        <source>edited prices</source>
        <translation>已编辑价格</translation>
    </message>
    <message>
        <location filename="../main_window_what_ifs.cpp" line="40"/>
        <source>other candidates</source>
        <translation>其他候选</translation>
    </message>
    <message>
        <location filename="../main_window_what_ifs.cpp" line="41"/>
        <source>edited scenario</source>
        <translation>已编辑场景</translation>
    </message>
    <message>
        <location filename="../main_window_what_ifs.cpp" line="42"/>
        <source>as opened</source>
        <translation>原始场景</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="988"/>
        <source>Nothing to export yet: run a full plan first (Run ▸ Run full plan).</source>
        <translation>尚无可导出的内容：请先运行完整规划（运行 ▸ 运行完整规划）。</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="997"/>
        <source>Exported %1</source>
        <translation>已导出 %1</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="1003"/>
        <source>Nothing to export yet: open a scenario first.</source>
        <translation>尚无可导出的内容：请先打开一个场景。</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="1015"/>
        <source>Running the full plan of the current inputs for the export to %1…</source>
        <translation>正在为导出到 %1 运行当前输入的完整规划…</translation>
    </message>
    <message>
        <location filename="../main_window.cpp" line="1022"/>
        <source>Export the report</source>
        <translation>导出报告</translation>
    </message>
</context>
<context>
    <name>llmcap::gui::ResultsModel</name>
    <message>
        <location filename="../results_model.cpp" line="113"/>
        <source>running…</source>
        <translation>计算中…</translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="114"/>
        <source>feasible</source>
        <translation>可行</translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="114"/>
        <source>infeasible</source>
        <translation>不可行</translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="149"/>
        <source>Instance type</source>
        <translation>实例类型</translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="151"/>
        <source>Device</source>
        <translation>设备</translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="153"/>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="155"/>
        <source>Fleet size</source>
        <translation>实例数</translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="157"/>
        <source>USD/hour</source>
        <translation>美元/小时</translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="159"/>
        <source>USD per M output tokens</source>
        <translation>每百万输出词元美元</translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="161"/>
        <source>TTFT p50</source>
        <translation>TTFT p50</translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="163"/>
        <source>TTFT p99</source>
        <translation>TTFT p99</translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="165"/>
        <source>TPOT p50</source>
        <translation>TPOT p50</translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="167"/>
        <source>TPOT p99</source>
        <translation>TPOT p99</translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="169"/>
        <source>Reason (infeasible)</source>
        <translation>原因（不可行）</translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="171"/>
        <source>TTFT p90</source>
        <translation>TTFT p90</translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="173"/>
        <source>TTFT max</source>
        <translation>TTFT 最大值</translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="175"/>
        <source>TPOT p90</source>
        <translation>TPOT p90</translation>
    </message>
    <message>
        <location filename="../results_model.cpp" line="177"/>
        <source>TPOT max</source>
        <translation>TPOT 最大值</translation>
    </message>
</context>
<context>
    <name>llmcap::gui::RunsView</name>
    <message>
        <location filename="../runs_view.cpp" line="115"/>
        <location filename="../runs_view.cpp" line="291"/>
        <source>run %1</source>
        <translation>运行 %1</translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="122"/>
        <source>Select two runs or what-ifs to compare.</source>
        <translation>请选择两个运行记录或假设分析进行比较。</translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="136"/>
        <source>Refresh</source>
        <translation>刷新</translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="137"/>
        <source>Open</source>
        <translation>打开</translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="138"/>
        <source>Compare two</source>
        <translation>比较两次</translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="139"/>
        <source>Database: %1</source>
        <translation>数据库：%1</translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="141"/>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="141"/>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="141"/>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="141"/>
        <source>Created (UTC)</source>
        <translation>创建时间（UTC）</translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="141"/>
        <source>Summary</source>
        <translation>摘要</translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="143"/>
        <source>Instance type</source>
        <translation>实例类型</translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="143"/>
        <location filename="../runs_view.cpp" line="144"/>
        <source>%1: fleet</source>
        <translation>%1：实例数</translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="143"/>
        <location filename="../runs_view.cpp" line="144"/>
        <source>%1: USD/hour</source>
        <translation>%1：美元/小时</translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="145"/>
        <source>%1: reason</source>
        <translation>%1：原因</translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="147"/>
        <source>What-ifs of this session (kept until the window closes, not in the database):</source>
        <translation>本次会话的假设分析（保留到窗口关闭，不存入数据库）：</translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="148"/>
        <source>What-if</source>
        <translation>假设分析</translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="148"/>
        <source>Answer</source>
        <translation>答案</translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="148"/>
        <source>USD/hour</source>
        <translation>美元/小时</translation>
    </message>
    <message>
        <location filename="../runs_view.cpp" line="307"/>
        <source>%1 or %2 holds no plan results to compare.</source>
        <translation>%1 或 %2 没有可比较的规划结果。</translation>
    </message>
</context>
<context>
    <name>llmcap::gui::ScenarioPanel</name>
    <message>
        <location filename="../scenario_panel.cpp" line="76"/>
        <source>Open a model config.json</source>
        <translation>打开模型 config.json</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="77"/>
        <source>JSON files (*.json)</source>
        <translation>JSON 文件 (*.json)</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="126"/>
        <source>Open a trace or length file</source>
        <translation>打开请求轨迹或长度文件</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="127"/>
        <source>CSV files (*.csv);;All files (*)</source>
        <translation>CSV 文件 (*.csv);;所有文件 (*)</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="180"/>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="181"/>
        <source>Open another config.json…</source>
        <translation>打开其他 config.json…</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="182"/>
        <source>Workload</source>
        <translation>工作负载</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="183"/>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="185"/>
        <source>Trace file</source>
        <translation>请求轨迹文件</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="185"/>
        <source>Length file</source>
        <translation>长度文件</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="186"/>
        <source>Requests per second</source>
        <translation>每秒请求数</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="187"/>
        <source>Duration (s)</source>
        <translation>时长（秒）</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="188"/>
        <source>Weibull shape</source>
        <translation>威布尔形状参数</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="188"/>
        <source>CV of gaps</source>
        <translation>到达间隔变异系数</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="189"/>
        <source>Users</source>
        <translation>用户数</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="190"/>
        <source>Think time (s)</source>
        <translation>思考时间（秒）</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="191"/>
        <source>SLO (p99)</source>
        <translation>SLO（p99）</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="192"/>
        <source>TTFT (s)</source>
        <translation>TTFT（秒）</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="193"/>
        <source>TPOT (s)</source>
        <translation>TPOT（秒）</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="194"/>
        <source>Candidate instance types and prices</source>
        <translation>候选实例类型与价格</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="196"/>
        <source>Use</source>
        <translation>使用</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="196"/>
        <source>Instance type</source>
        <translation>实例类型</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="196"/>
        <source>Device</source>
        <translation>设备</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="196"/>
        <source>Price model</source>
        <translation>计价模式</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="196"/>
        <source>USD/hour</source>
        <translation>美元/小时</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="255"/>
        <source>Scenario: %1</source>
        <translation>场景：%1</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="313"/>
        <source>Source: %1 (as of %2)</source>
        <translation>来源：%1（截至 %2）</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="317"/>
        <source>No %1 price in the catalog</source>
        <translation>目录中没有 %1 价格</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="323"/>
        <source>Edited in llmcap-gui (as of %1)</source>
        <translation>已在 llmcap-gui 中修改（%1）</translation>
    </message>
    <message>
        <location filename="../scenario_panel.cpp" line="391"/>
        <source>Choose at least one instance type.</source>
        <translation>请至少选择一种实例类型。</translation>
    </message>
</context>
</TS>
