print("localauthd: not yet")
