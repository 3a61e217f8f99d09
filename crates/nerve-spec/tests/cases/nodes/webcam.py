print("webcam")
