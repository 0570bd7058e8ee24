//! Circuit breakers. Each file is one state machine.

pub mod consecutive;
