print("plot")
