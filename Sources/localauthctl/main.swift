print("localauthctl: not yet")
