"""JUnit XML of the gate (`--junit FILE`): one testcase per benchmark, a failure for each that
failed or broke, skipped for undecided, new and removed — the format every CI server's test view
reads (the Ant JUnit task's schema, as pytest's --junitxml writes it)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from cyclebench.gate import BROKEN, FAIL, NEW, REMOVED, UNDECIDED, Gate
from cyclebench.report.gate.common import counts, delta, verdict
from cyclebench.report.titles import confined, confinement_text


def junit(g: Gate) -> str:
    """The XML document, UTF-8, with its declaration; the suite's properties say how base and
    head were built and run (``confinement``: bwrap, unconfined: REASON, or not recorded; and
    ``confinement_text``, in words: report.titles.confinement_text)."""
    failures = sum(1 for r in g.rows if r.status in (FAIL, BROKEN))
    skipped = sum(1 for r in g.rows if r.status in (UNDECIDED, NEW, REMOVED))
    root = ET.Element("testsuites", name="cyclebench ci", tests=str(len(g.rows)), failures=str(failures),
                      errors="0", skipped=str(skipped))
    suite = ET.SubElement(root, "testsuite", name="cyclebench ci", tests=str(len(g.rows)), failures=str(failures),
                          errors="0", skipped=str(skipped), timestamp=str(g.facts.get("when", "")))
    # the schema's place for facts of the whole suite: how base and head were built and run, as
    # recorded (bwrap, unconfined: REASON), and said in words
    recorded = g.facts.get("confinement")
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="confinement", value=str(recorded) if confined(recorded) is not None
                  else "not recorded")
    ET.SubElement(props, "property", name="confinement_text", value=confinement_text(recorded))
    for r in g.ranked():
        seconds = (r.row.sequential or {}).get("seconds", 0.0) if r.row is not None else 0.0
        case = ET.SubElement(suite, "testcase", classname="cyclebench.ci", name=r.label, time=f"{seconds:.3f}")
        text = (f"{r.label}: Δ {delta(r)}, Ir {counts(r)}: {verdict(r, g.counts_threshold)}"
                + (f" ({r.why})" if r.why else ""))
        if r.status in (FAIL, BROKEN):
            ET.SubElement(case, "failure", message=text, type=r.status).text = text
        elif r.status in (UNDECIDED, NEW, REMOVED):
            ET.SubElement(case, "skipped", message=text)
        else:
            ET.SubElement(case, "system-out").text = text
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
