//! A run's expectations as a JUnit XML report (`brownout run --junit FILE`), so CI systems
//! show each expectation as a test: one `<testsuite>` per scenario, one `<testcase>` per
//! expectation with classname `scenario/policy set` and the expectation's text as its name.

use anyhow::Result;
use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};

use crate::report::expect::Checked;
use crate::scenario::Expectation;

/// The JUnit XML document of `checked` (the verdicts of `expect`, in the same order) for the
/// scenario `scenario`.
pub fn expectations(scenario: &str, expect: &[Expectation], checked: &[Checked]) -> Result<Vec<u8>> {
    anyhow::ensure!(expect.len() == checked.len(), "{} expectations but {} verdicts", expect.len(), checked.len());
    let failures = checked.iter().filter(|c| !c.passed).count().to_string();
    let tests = checked.len().to_string();
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let counts = [("tests", tests.as_str()), ("failures", failures.as_str()), ("errors", "0")];
    w.write_event(Event::Start(BytesStart::new("testsuites").with_attributes(counts)))?;
    let suite = BytesStart::new("testsuite").with_attributes([("name", scenario)]).with_attributes(counts);
    w.write_event(Event::Start(suite))?;
    for (e, c) in expect.iter().zip(checked) {
        let classname = format!("{scenario}/{}", e.policy);
        let case = BytesStart::new("testcase")
            .with_attributes([("classname", classname.as_str()), ("name", c.statement.as_str())]);
        if c.passed {
            w.write_event(Event::Empty(case))?;
            continue;
        }
        w.write_event(Event::Start(case))?;
        let message = format!("{} (measured {})", c.statement, c.measured());
        let failure =
            BytesStart::new("failure").with_attributes([("message", message.as_str()), ("type", "expectation")]);
        w.write_event(Event::Start(failure))?;
        w.write_event(Event::Text(BytesText::new(&format!("measured {}", c.measured()))))?;
        w.write_event(Event::End(BytesEnd::new("failure")))?;
        w.write_event(Event::End(BytesEnd::new("testcase")))?;
    }
    w.write_event(Event::End(BytesEnd::new("testsuite")))?;
    w.write_event(Event::End(BytesEnd::new("testsuites")))?;
    let mut bytes = w.into_inner();
    bytes.push(b'\n');
    Ok(bytes)
}
