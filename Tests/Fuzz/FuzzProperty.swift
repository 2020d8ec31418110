// The fuzz targets' entry points live in this folder, one file a target, as
// the library LocalAuthFuzzTargets. Two callers: scripts/fuzz links each one
// into a libFuzzer binary (with a two-line LLVMFuzzerTestOneInput that calls
// it), and FuzzRegressionTests runs every committed input through the same
// function, so the regression tests check exactly what the fuzzer checks.
//
// A violated property calls `FuzzProperty.violated`: by default it traps,
// which libFuzzer reports as a crash with the input; the regression tests
// install a reporter that fails the test, names the input and goes on.
public enum FuzzProperty {
    nonisolated(unsafe) public static var violated: (String) -> Void = { message in preconditionFailure(message) }
}

/// `precondition`, through FuzzProperty.violated.
@inline(__always)
func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { FuzzProperty.violated(message()) }
}
