// The D-Bus API's names and interfaces as data (PROTOCOL.md "The D-Bus
// API"): what `Introspect` returns, and the signature every call is checked
// against before it becomes a request (S-72). The repository's
// dbus/io.github.localauthd.LocalAuthentication1.xml is the same interfaces
// with their documentation; BusIntrospectionTests keeps the two equal.

enum BusNames {
    static let service = "io.github.localauthd.LocalAuthentication1"
    static let root = "/io/github/localauthd/LocalAuthentication1"
    static let rootInterface = service
    static let contextInterface = service + ".Context"
    static let requestInterface = service + ".Request"
    static let environmentInterface = service + ".Environment"
    static let errorPrefix = service + ".Error."
    static let properties = "org.freedesktop.DBus.Properties"
    static let introspectable = "org.freedesktop.DBus.Introspectable"
}

/// One method's or signal's arguments, as (name, type) pairs.
struct BusMethodSpec {
    let name: String
    let inputs: [(String, String)]
    let outputs: [(String, String)]

    /// The signature a call of it must have.
    var signature: String { inputs.map(\.1).joined() }
}

struct BusPropertySpec {
    enum Access: String { case read, write, readwrite }
    let name: String
    let type: String
    let access: Access
    /// False: no PropertiesChanged (the annotation says so).
    let emitsChanged: Bool
}

struct BusInterfaceSpec {
    let name: String
    let methods: [BusMethodSpec]
    let signals: [BusMethodSpec]
    let properties: [BusPropertySpec]

    func method(_ name: String) -> BusMethodSpec? { methods.first { $0.name == name } }
    func property(_ name: String) -> BusPropertySpec? { properties.first { $0.name == name } }
}

enum BusInterfaces {
    private static let check: [(String, String)] = [
        ("ok", "b"), ("biometry_type", "u"), ("error_code", "i"), ("error_name", "s"), ("domain_state", "ay"),
    ]

    static let root = BusInterfaceSpec(name: BusNames.rootInterface, methods: [
        BusMethodSpec(name: "CreateContext", inputs: [], outputs: [("context", "o")]),
        BusMethodSpec(name: "CanEvaluatePolicy", inputs: [("policy", "u")], outputs: check),
        BusMethodSpec(name: "SaveRight", inputs: [("identifier", "s"), ("requirement", "s"), ("secret", "ay")], outputs: []),
        BusMethodSpec(name: "RightState", inputs: [("identifier", "s")], outputs: [("requirement", "s"), ("has_secret", "b")]),
        BusMethodSpec(name: "RemoveRight", inputs: [("identifier", "s")], outputs: []),
        BusMethodSpec(name: "RemoveAllRights", inputs: [], outputs: []),
    ], signals: [], properties: [])

    static let context = BusInterfaceSpec(name: BusNames.contextInterface, methods: [
        BusMethodSpec(name: "CanEvaluatePolicy", inputs: [("policy", "u")], outputs: check),
        BusMethodSpec(name: "EvaluatePolicy", inputs: [("policy", "u"), ("localized_reason", "s"), ("options", "a{sv}")],
                      outputs: [("request", "o")]),
        BusMethodSpec(name: "Invalidate", inputs: [], outputs: []),
        BusMethodSpec(name: "Authorize", inputs: [("identifier", "s"), ("localized_reason", "s"), ("options", "a{sv}")],
                      outputs: [("request", "o")]),
        BusMethodSpec(name: "Deauthorize", inputs: [("identifier", "s")], outputs: []),
        BusMethodSpec(name: "Secret", inputs: [("identifier", "s")], outputs: [("secret", "ay")]),
    ], signals: [], properties: [
        BusPropertySpec(name: "LocalizedFallbackTitle", type: "s", access: .readwrite, emitsChanged: false),
        BusPropertySpec(name: "LocalizedCancelTitle", type: "s", access: .readwrite, emitsChanged: false),
        BusPropertySpec(name: "LocalizedReason", type: "s", access: .write, emitsChanged: false),
        BusPropertySpec(name: "TouchIDAuthenticationAllowableReuseDuration", type: "u", access: .readwrite, emitsChanged: false),
        BusPropertySpec(name: "InteractionNotAllowed", type: "b", access: .readwrite, emitsChanged: false),
        BusPropertySpec(name: "Prompts", type: "s", access: .readwrite, emitsChanged: false),
        BusPropertySpec(name: "BiometryType", type: "u", access: .read, emitsChanged: false),
        BusPropertySpec(name: "EvaluatedPolicyDomainState", type: "ay", access: .read, emitsChanged: false),
        BusPropertySpec(name: "State", type: "s", access: .read, emitsChanged: false),
    ])

    static let request = BusInterfaceSpec(name: BusNames.requestInterface, methods: [
        BusMethodSpec(name: "Cancel", inputs: [], outputs: []),
        BusMethodSpec(name: "Fallback", inputs: [], outputs: []),
        BusMethodSpec(name: "Passcode", inputs: [("passcode", "ay")], outputs: []),
    ], signals: [
        BusMethodSpec(name: "Prompt", inputs: [("kind", "s"), ("details", "a{sv}")], outputs: []),
        BusMethodSpec(name: "Completed", inputs: [("success", "b"), ("method", "s"), ("error_code", "i"), ("error_name", "s"),
                                                  ("details", "a{sv}")], outputs: []),
    ], properties: [])

    static let environment = BusInterfaceSpec(name: BusNames.environmentInterface, methods: [], signals: [], properties: [
        BusPropertySpec(name: "Uid", type: "u", access: .read, emitsChanged: true),
        BusPropertySpec(name: "BiometryType", type: "u", access: .read, emitsChanged: true),
        BusPropertySpec(name: "BiometryIsEnrolled", type: "b", access: .read, emitsChanged: true),
        BusPropertySpec(name: "BiometryIsLockedOut", type: "b", access: .read, emitsChanged: true),
        BusPropertySpec(name: "BiometryIsUsable", type: "b", access: .read, emitsChanged: true),
        BusPropertySpec(name: "BiometryStateHash", type: "ay", access: .read, emitsChanged: true),
        BusPropertySpec(name: "BuiltInSensorInaccessible", type: "b", access: .read, emitsChanged: true),
        BusPropertySpec(name: "UserPasswordIsSet", type: "b", access: .read, emitsChanged: true),
    ])

    /// The introspection of an object with `interface` (nil: a node
    /// without one) and these child nodes.
    static func introspection(_ interface: BusInterfaceSpec?, children: [String]) -> String {
        var xml = """
            <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
            <node>

            """
        xml += standard
        if let interface { xml += render(interface) }
        for child in children { xml += " <node name=\"\(child)\"/>\n" }
        return xml + "</node>\n"
    }

    private static func render(_ interface: BusInterfaceSpec) -> String {
        var xml = " <interface name=\"\(interface.name)\">\n"
        for method in interface.methods {
            let arguments = method.inputs.map { ($0, $1, "in") } + method.outputs.map { ($0, $1, "out") }
            guard !arguments.isEmpty else {
                xml += "  <method name=\"\(method.name)\"/>\n"
                continue
            }
            xml += "  <method name=\"\(method.name)\">\n"
            for (name, type, direction) in arguments {
                xml += "   <arg name=\"\(name)\" type=\"\(type)\" direction=\"\(direction)\"/>\n"
            }
            xml += "  </method>\n"
        }
        for signal in interface.signals {
            xml += "  <signal name=\"\(signal.name)\">\n"
            for (name, type) in signal.inputs { xml += "   <arg name=\"\(name)\" type=\"\(type)\"/>\n" }
            xml += "  </signal>\n"
        }
        for property in interface.properties {
            let head = "  <property name=\"\(property.name)\" type=\"\(property.type)\" access=\"\(property.access.rawValue)\""
            if property.emitsChanged {
                xml += head + "/>\n"
            } else {
                xml += head + ">\n   <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" value=\"false\"/>\n"
                    + "  </property>\n"
            }
        }
        return xml + " </interface>\n"
    }

    /// Introspectable, Properties and Peer, as every object has them.
    private static let standard = """
         <interface name="org.freedesktop.DBus.Peer">
          <method name="Ping"/>
          <method name="GetMachineId">
           <arg name="machine_uuid" type="s" direction="out"/>
          </method>
         </interface>
         <interface name="org.freedesktop.DBus.Introspectable">
          <method name="Introspect">
           <arg name="xml_data" type="s" direction="out"/>
          </method>
         </interface>
         <interface name="org.freedesktop.DBus.Properties">
          <method name="Get">
           <arg name="interface_name" type="s" direction="in"/>
           <arg name="property_name" type="s" direction="in"/>
           <arg name="value" type="v" direction="out"/>
          </method>
          <method name="GetAll">
           <arg name="interface_name" type="s" direction="in"/>
           <arg name="props" type="a{sv}" direction="out"/>
          </method>
          <method name="Set">
           <arg name="interface_name" type="s" direction="in"/>
           <arg name="property_name" type="s" direction="in"/>
           <arg name="value" type="v" direction="in"/>
          </method>
          <signal name="PropertiesChanged">
           <arg name="interface_name" type="s"/>
           <arg name="changed_properties" type="a{sv}"/>
           <arg name="invalidated_properties" type="as"/>
          </signal>
         </interface>

        """
}
