print("talker")
