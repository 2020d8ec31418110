// The suites' seeded generator is the simulator's (LocalAuthSeeded): every
// test that imports the test support has it.
@_exported import LocalAuthSeeded
